"""``cutediff env``: toolchain environments (create, list, remove, download)."""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

import click

from ..core.errors import CutediffError
from .common import (
    complete_versions,
    emit_json,
    examples,
    guarded,
    json_option,
    out_console,
    progress_printer,
    standard_options,
)


class EnvRow(TypedDict):
    """One environment as ``cutediff env list --json`` writes it."""

    name: str
    dsl: str
    pins: list[str]
    packages: dict[str, str]
    path: str
    size_bytes: int


@click.group(
    epilog=examples(
        "cutediff env create 4.8.0 --with quack-kernels==0.6.5",
        "cutediff env list --json -",
        "cutediff env remove 4.5.1",
    )
)
def env() -> None:
    """Toolchain environments (one overlay per DSL version + pins, in the user cache)."""


def _env_opts(func):
    for o in reversed(
        [
            click.option("--with", "with_", multiple=True, help="Pin (NAME==VERSION or a source folder)."),
            click.option("--cuda", type=click.Choice(["12", "13"]), default=None),
            standard_options,
        ]
    ):
        func = o(func)
    return func


@env.command(
    "create",
    epilog=examples(
        "cutediff env create 4.8.0",
        "cutediff env create 4.8.0,quack-kernels==0.6.5 --cuda 13",
        "cutediff env create 4.5.1 --wheelhouse /mnt/wheels",
    ),
)
@click.argument("spec", shell_complete=complete_versions)
@_env_opts
@click.option("--wheelhouse", type=click.Path(path_type=Path), default=None, help="Install offline from this folder.")
@guarded
def env_create(spec: str, with_: tuple, cuda: str | None, wheelhouse: Path | None) -> None:
    """Create (or reuse) the environment for SPEC, e.g. 4.8.0 or 4.8.0,quack-kernels==0.6.5."""
    from ..core.toolchain import create_env, parse_side

    s = parse_side(spec, with_, int(cuda) if cuda else None)
    e = create_env(s, wheelhouse=wheelhouse, progress=progress_printer())
    out_console.print(f"{e.name}  {e.path}")
    for k, v in e.versions().items():
        out_console.print(f"  {k}=={v}")


@env.command("list", epilog=examples("cutediff env list", "cutediff env list --json envs.json"))
@json_option("Write the environments as JSON to PATH, or - for stdout.")
@standard_options
@guarded
def env_list(json_out: str | None) -> None:
    """List created environments with their disk use (names in full, also into a pipe: env
    remove takes them; --json gives size_bytes)."""
    from rich.table import Table

    from ..core.cache_admin import disk_usage, human_size
    from ..core.toolchain import list_envs

    envs = list_envs()
    rows: list[EnvRow] = [
        {
            "name": e.name,
            "dsl": e.spec.dsl,
            "pins": [str(p) for p in e.spec.pins],
            "packages": e.versions(),
            "path": str(e.path),
            "size_bytes": disk_usage(e.path),
        }
        for e in envs
    ]
    if not emit_json(rows, json_out):
        return
    t = Table(show_edge=False)
    for c in ("name", "DSL", "pins", "packages", "size", "path"):
        t.add_column(c, overflow="fold", justify="right" if c == "size" else "left")
    for r in rows:
        t.add_row(
            r["name"],
            r["dsl"],
            ", ".join(r["pins"]) or "-",
            str(len(r["packages"])),
            human_size(r["size_bytes"]),
            r["path"],
        )
    out_console.print(t)
    if len(rows) > 1:
        total = sum(r["size_bytes"] for r in rows)
        out_console.print(f"{len(rows)} environments, {human_size(total)} on disk", style="dim")


@env.command("remove", epilog=examples("cutediff env remove 4.5.1", "cutediff env remove dsl-4.8.0-cu13-f38feb73"))
@click.argument("target")
@standard_options
@guarded
def env_remove(target: str) -> None:
    """Remove environments by name, key or DSL version."""
    from ..core.toolchain import remove_env

    removed = remove_env(target)
    if not removed:
        raise CutediffError(f"No environment matches {target!r}.", "cutediff env list shows the names.")
    for n in removed:
        out_console.print(f"removed {n}")


@env.command(
    "download",
    epilog=examples(
        "cutediff env download 4.8.0 -d wheels/ --python-version 3.12",
        "cutediff env download 4.8.0,quack-kernels==0.6.5 -d wheels/ --platform manylinux_2_28_aarch64",
    ),
)
@click.argument("spec", shell_complete=complete_versions)
@_env_opts
@click.option("-d", "--dest", type=click.Path(path_type=Path), required=True, help="Wheelhouse folder to fill.")
@click.option("--python-version", default=None, help="Python of the target machine, e.g. 3.12.")
@click.option("--platform", "platform_", default="manylinux_2_28_x86_64", show_default=True)
@guarded
def env_download(
    spec: str, with_: tuple, cuda: str | None, dest: Path, python_version: str | None, platform_: str
) -> None:
    """Fill a wheelhouse for SPEC on a connected machine (then: env create SPEC --wheelhouse DIR)."""
    from ..core.toolchain import download_env, parse_side, python_tag

    s = parse_side(spec, with_, int(cuda) if cuda else None)
    lock = download_env(
        s, dest, python_version=python_version or python_tag(), pip_platform=platform_, progress=progress_printer()
    )
    out_console.print(f"wheelhouse ready: {dest} (lock {lock.name})")
