"""``cutediff env``: toolchain environments (create, list, remove, download)."""

from __future__ import annotations

from pathlib import Path

import click

from ..core.errors import CutediffError
from .common import guarded, out_console, progress_printer


@click.group()
def env() -> None:
    """Toolchain environments (one overlay per DSL version + pins, in the user cache)."""


def _env_opts(func):
    for o in reversed(
        [
            click.option("--with", "with_", multiple=True, help="Pin (NAME==VERSION or a source folder)."),
            click.option("--cuda", type=click.Choice(["12", "13"]), default=None),
            click.option("--debug", is_flag=True),
        ]
    ):
        func = o(func)
    return func


@env.command("create")
@click.argument("spec")
@_env_opts
@click.option("--wheelhouse", type=click.Path(path_type=Path), default=None, help="Install offline from this folder.")
@guarded
def env_create(spec: str, with_: tuple, cuda: str | None, debug: bool, wheelhouse: Path | None) -> None:
    """Create (or reuse) the environment for SPEC, e.g. 4.8.0 or 4.8.0,quack-kernels==0.6.5."""
    from ..core.toolchain import create_env, parse_side

    s = parse_side(spec, with_, int(cuda) if cuda else None)
    e = create_env(s, wheelhouse=wheelhouse, progress=progress_printer())
    out_console.print(f"{e.name}  {e.path}")
    for k, v in e.versions().items():
        out_console.print(f"  {k}=={v}")


@env.command("list")
def env_list() -> None:
    """List created environments."""
    from rich.table import Table

    from ..core.toolchain import list_envs

    t = Table(show_edge=False)
    for c in ("name", "DSL", "pins", "packages", "path"):
        t.add_column(c)
    for e in list_envs():
        v = e.versions()
        t.add_row(e.name, e.spec.dsl, ", ".join(map(str, e.spec.pins)) or "-", str(len(v)), str(e.path))
    out_console.print(t)


@env.command("remove")
@click.argument("target")
@guarded
def env_remove(target: str) -> None:
    """Remove environments by name, key or DSL version."""
    from ..core.toolchain import remove_env

    removed = remove_env(target)
    if not removed:
        raise CutediffError(f"No environment matches {target!r}.", "cutediff env list shows the names.")
    for n in removed:
        out_console.print(f"removed {n}")


@env.command("download")
@click.argument("spec")
@_env_opts
@click.option("-d", "--dest", type=click.Path(path_type=Path), required=True, help="Wheelhouse folder to fill.")
@click.option("--python-version", default=None, help="Python of the target machine, e.g. 3.12.")
@click.option("--platform", "platform_", default="manylinux_2_28_x86_64", show_default=True)
@guarded
def env_download(
    spec: str, with_: tuple, cuda: str | None, debug: bool, dest: Path, python_version: str | None, platform_: str
) -> None:
    """Fill a wheelhouse for SPEC on a connected machine (then: env create SPEC --wheelhouse DIR)."""
    from ..core.toolchain import download_env, parse_side, python_tag

    s = parse_side(spec, with_, int(cuda) if cuda else None)
    lock = download_env(
        s, dest, python_version=python_version or python_tag(), pip_platform=platform_, progress=progress_printer()
    )
    out_console.print(f"wheelhouse ready: {dest} (lock {lock.name})")
