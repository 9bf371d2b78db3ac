"""``cutediff cache``: the build cache."""

from __future__ import annotations

import json

import click

from .common import out_console


@click.group()
def cache() -> None:
    """The build cache."""


@cache.command("info")
def cache_info_cmd() -> None:
    from ..core.build import cache_info

    out_console.print_json(json.dumps(cache_info()))


@cache.command("clear")
@click.option("--all", "all_", is_flag=True, help="Environments too, not only builds.")
def cache_clear_cmd(all_: bool) -> None:
    from ..core.build import cache_clear

    n = cache_clear("all" if all_ else "builds")
    out_console.print(f"removed {n} entries")
