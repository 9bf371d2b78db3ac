"""``cutediff env list``: each environment's disk use, human-readable in the table and exact
(``size_bytes``) in ``--json`` (issue 18 leftovers), on env folders made in a temporary cache."""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

from cutediff_tui.cli import main
from cutediff_tui.core.cache_admin import disk_usage, human_size

PAYLOAD = 300 * 1024  # bytes of real (non-sparse) data in the first environment


def make_env(cache: Path, dsl: str, payload: int) -> Path:
    """An environment folder as ``list_envs`` reads it: ``env.json`` and some installed files."""
    d = cache / "envs" / f"dsl-{dsl}-cu13-0000"
    (d / "site" / "pkg").mkdir(parents=True)
    (d / "env.json").write_text(json.dumps({"spec": {"dsl": dsl, "pins": [], "cuda": "13"}, "key": dsl, "lock": {}}))
    (d / "site" / "pkg" / "lib.so").write_bytes(os.urandom(payload))
    return d


def test_env_list_shows_each_environments_disk_use(tmp_path, monkeypatch):
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path))
    big, small = make_env(tmp_path, "4.8.0", PAYLOAD), make_env(tmp_path, "4.5.1", 10)
    res = CliRunner().invoke(main, ["env", "list", "--json", "-"])
    assert res.exit_code == 0, res.output
    rows = {r["dsl"]: r for r in json.loads(res.stdout)}
    assert rows["4.8.0"]["size_bytes"] == disk_usage(big)
    assert PAYLOAD <= rows["4.8.0"]["size_bytes"] < PAYLOAD + 64 * 1024  # the payload plus a few blocks
    assert rows["4.5.1"]["size_bytes"] == disk_usage(small) < 64 * 1024

    table = CliRunner().invoke(main, ["env", "list"], env={"COLUMNS": "200"})
    assert table.exit_code == 0, table.output
    header = table.stdout.splitlines()[0]
    assert "size" in header.split()
    (line,) = [ln for ln in table.stdout.splitlines() if "dsl-4.8.0-cu13-0000" in ln]
    assert human_size(rows["4.8.0"]["size_bytes"]) in line and " KB" in line
    total = human_size(rows["4.8.0"]["size_bytes"] + rows["4.5.1"]["size_bytes"])
    assert f"2 environments, {total} on disk" in table.stdout


def test_env_list_with_no_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path))
    res = CliRunner().invoke(main, ["env", "list", "--json", "-"])
    assert res.exit_code == 0 and json.loads(res.stdout) == []


def test_an_edited_env_json_is_not_listed_as_an_environment(tmp_path, monkeypatch):
    """A hand-edited env.json whose lock is not a table of packages was an internal error in
    `env list` (AttributeError in versions()); it is not an environment cutediff can use."""
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path))
    make_env(tmp_path, "4.8.0", 10)
    bad = make_env(tmp_path, "4.5.1", 10)
    for lock in ("", [1], {"torch": "2.13"}):
        meta = json.loads((bad / "env.json").read_text())
        (bad / "env.json").write_text(json.dumps({**meta, "lock": lock}))
        res = CliRunner().invoke(main, ["env", "list", "--json", "-"])
        assert res.exit_code == 0, res.output
        assert [r["dsl"] for r in json.loads(res.stdout)] == ["4.8.0"]
