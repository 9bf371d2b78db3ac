"""``cutediff cache``: what the user cache holds, and clearing what cutediff made."""

from __future__ import annotations

import click
from rich.markup import escape

from .common import emit_json, err_console, examples, guarded, json_option, out_console, standard_options


@click.group(epilog=examples("cutediff cache info", "cutediff cache clear", "cutediff cache clear --all"))
def cache() -> None:
    """The build cache."""


@cache.command("info", epilog=examples("cutediff cache info", "cutediff cache info --json -"))
@json_option("Write the figures as JSON (bytes exact) to PATH, or - for stdout.")
@standard_options
@guarded
def cache_info_cmd(json_out: str | None) -> None:
    """Entries and disk use of every area of the cache (human-readable sizes)."""
    from ..core.cache_admin import cache_info

    info = cache_info()
    if not emit_json(info, json_out):
        return
    out_console.print(f"cache {info['root']}" + ("" if info["marked"] else " (no cutediff tag yet)"))
    for name, a in info["areas"].items():
        out_console.print(f"  {name + '/':13} {a['entries']:6} {a['what']:20} {a['size']:>10}")
    out_console.print(f"  {'total':13} {'':6} {'':20} {info['total']:>10}")


@cache.command("clear", epilog=examples("cutediff cache clear", "cutediff cache clear --all"))
@click.option("--all", "all_", is_flag=True, help="Environments, tools and sources too, not only builds.")
@standard_options
@guarded
def cache_clear_cmd(all_: bool) -> None:
    """Remove the cache entries cutediff made (builds, disassembly, imports, comparisons)."""
    from ..core.cache_admin import cache_clear, human_size

    res = cache_clear("all" if all_ else "builds")
    out_console.print(f"removed {res['removed']} entries ({human_size(res['bytes'])})")
    if res["kept"]:
        err_console.print(
            f"[yellow]kept {len(res['kept'])} entries that carry no cutediff marker[/] (first: {escape(res['kept'][0])})",
            soft_wrap=True,
        )
