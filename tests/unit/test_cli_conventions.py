"""One meaning per flag across every command (issue 18 item 3): ``--json PATH|-``, ``-o``,
``-q``, ``-v``, ``--color``/``NO_COLOR``, ``--kernel-filter``, ``--recipe`` (once ``--kernel``),
values that look like flags, full width into a pipe, progress bars, sizes, ``report --format
csv``, GitHub annotations, examples in ``--help`` and value completion."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from cutediff_tui.cli import COMMANDS, main
from cutediff_tui.cli.common import OLD_RECIPE_NOTE, RECIPE_HELP, CliState, names_recipe_the_old_way
from cutediff_tui.samples import bundled_sample_dir

SAMPLE = bundled_sample_dir()
CUBIN_A = SAMPLE / "a" / "000" / "kernel.cubin"
CUBIN_B = SAMPLE / "b" / "000" / "kernel.cubin"


def leaf_commands() -> list[tuple[str, click.Command]]:
    """Every command a user runs: ``compare``, …, ``env create``, ``cache info``."""
    out = []
    for name in sorted(COMMANDS):
        cmd = main.get_command(None, name)
        if isinstance(cmd, click.Group):
            out += [(f"{name} {sub}", cmd.get_command(None, sub)) for sub in sorted(cmd.list_commands(None))]
        else:
            out.append((name, cmd))
    return out


LEAVES = leaf_commands()
LEAF_NAMES = [n for n, _ in LEAVES]


def option(cmd: click.Command, flag: str) -> click.Option | None:
    return next((p for p in cmd.params if isinstance(p, click.Option) and flag in p.opts), None)


def with_option(flag: str) -> list[str]:
    return [n for n, c in LEAVES if option(c, flag) is not None]


def run(args: list[str], **kw) -> click.testing.Result:
    return CliRunner().invoke(main, args, prog_name="cutediff", **kw)


def test_the_commands_are_all_found():
    assert {"compare", "diff", "report", "check", "bench", "bisect", "sweep", "recipes", "open"} <= set(LEAF_NAMES)
    assert {"env create", "env list", "env remove", "env download", "cache info", "cache clear"} <= set(LEAF_NAMES)


# ---------------------------------------------------------------- --json PATH|-

JSON_COMMANDS = with_option("--json")


def test_every_json_option_is_path_or_dash():
    assert set(JSON_COMMANDS) >= {"compare", "diff", "report", "check", "bench", "bisect", "sweep", "recipes"}
    assert {"cache info", "env list"} <= set(JSON_COMMANDS)
    for name in JSON_COMMANDS:
        opt = option(dict(LEAVES)[name], "--json")
        assert not opt.is_flag and opt.metavar == "PATH|-", name
        assert "- for stdout" in opt.help, name


#: The commands that run here without a compile, with their arguments.
OFFLINE_JSON = {
    "diff": ["diff", str(CUBIN_A), str(CUBIN_B)],
    "report": ["report", str(SAMPLE), "-o", "{tmp}/r.md"],
    "check": ["check", "--result", str(SAMPLE), "--max-spill-bytes", "1000"],
    "recipes": ["recipes"],
    "cache info": ["cache", "info"],
    "env list": ["env", "list"],
}


@pytest.mark.parametrize("name", sorted(OFFLINE_JSON))
def test_json_dash_writes_json_to_stdout(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path / "cache"))
    args = [a.replace("{tmp}", str(tmp_path)) for a in OFFLINE_JSON[name]]
    res = run([*args, "--json", "-"])
    assert res.exit_code == 0, res.output
    json.loads(res.stdout)  # stdout is the JSON and nothing else
    assert list(tmp_path.glob("-")) == []  # no file named "-"


def test_json_path_writes_a_file_and_says_its_size(tmp_path, monkeypatch):
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "info.json"
    res = run(["cache", "info", "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["root"] == str(tmp_path / "cache")
    assert re.search(r"wrote .*info\.json \(\d+ B\)", res.stderr)


@pytest.mark.parametrize("name", JSON_COMMANDS)
def test_json_followed_by_a_flag_is_refused(name, tmp_path, monkeypatch):
    """``--json --allow-arch-mismatch`` once wrote a file named ``--allow-arch-mismatch``."""
    monkeypatch.chdir(tmp_path)
    res = run([*name.split(), "A", "B", "--json", "--allow-arch-mismatch"])
    assert res.exit_code == 2
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "--json needs a value" in lines[0], res.output
    assert "Traceback" not in res.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", LEAF_NAMES)
def test_every_value_option_refuses_a_flag_as_its_value(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cmd = dict(LEAVES)[name]
    opts = [p.opts[0] for p in cmd.params if isinstance(p, click.Option) and not p.is_flag and not p.count]
    for opt in opts:
        res = run([*name.split(), opt, "--quiet"])
        assert res.exit_code == 2 and f"{opt} needs a value" in res.output, (name, opt, res.output)


def test_dash_negative_numbers_and_equals_are_values(tmp_path):
    res = run(["check", "--result", str(SAMPLE), "--max-register-delta", "-4", "--json", "-"])
    assert res.exit_code == 1 and "needs a value" not in res.output  # -4 is a value (B − A = 0 > -4: broken)
    data = json.loads(res.stdout)
    assert data["schema"].startswith("cutediff.comparison/")
    res = run(["report", str(SAMPLE), "--format=csv", "-o", str(tmp_path / "x.csv")])
    assert res.exit_code == 0 and (tmp_path / "x.csv").read_text().startswith("kernel,side,")


# ---------------------------------------------------------------- -q -v --color --debug, -o, --kernel-filter


@pytest.mark.parametrize("name", LEAF_NAMES)
def test_every_command_takes_the_shared_flags(name):
    cmd = dict(LEAVES)[name]
    for flags in (("-q", "--quiet"), ("-v", "--verbose"), ("--color",), ("--debug",)):
        opt = option(cmd, flags[-1])
        assert opt is not None and set(flags) <= set(opt.opts), (name, flags)
        assert opt.expose_value is False  # kept in the click context, the same for every command
    assert list(option(cmd, "--color").type.choices) == ["auto", "always", "never"]


def test_minus_o_means_output_everywhere():
    users = with_option("-o")
    assert "report" in users
    for name in users:
        assert option(dict(LEAVES)[name], "-o").opts == ["-o", "--output"], name


@pytest.mark.parametrize("name", with_option("--kernel-filter"))
def test_kernel_filter_is_a_regex_checked_at_once(name, tmp_path, monkeypatch):
    assert set(with_option("--kernel-filter")) >= {"check", "bench", "bisect", "sweep"}
    opt = option(dict(LEAVES)[name], "--kernel-filter")
    assert opt.metavar == "REGEX"
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path))
    extra = {"bisect": ["--good", "4.5.1", "--bad", "4.8.0", "--metric", "STL>0"], "sweep": ["4.8.0"]}
    res = run([*name.split(), *extra.get(name, ["4.5.1", "4.8.0"]), "--kernel-filter", "Fwd("])
    assert res.exit_code == 2
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Fwd(" in lines[0], res.output


def test_kernel_filter_has_one_help_wording_everywhere():
    """One decorator (``cli/common.py`` ``kernel_filter_option``): every command's help starts the
    same; only what the command does with the kept kernels follows."""
    from cutediff_tui.cli.common import KERNEL_FILTER_HELP

    users = with_option("--kernel-filter")
    assert set(users) >= {"compare", "diff", "report", "check", "bench", "bisect", "sweep"}
    for name in users:
        opt = option(dict(LEAVES)[name], "--kernel-filter")
        assert opt.help.startswith(KERNEL_FILTER_HELP), (name, opt.help)
        assert opt.callback is not None and opt.callback.__name__ == "_check_regex", name


# ---------------------------------------------------------------- --recipe (once --kernel)


RECIPE_COMMANDS = with_option("--recipe")


def test_names_recipe_the_old_way():
    assert names_recipe_the_old_way(["compare", "A", "B", "--kernel", "fa4-fwd"])
    assert names_recipe_the_old_way(["compare", "A", "B", "--kernel=fa4-fwd"])
    assert not names_recipe_the_old_way(["compare", "A", "B", "--recipe", "fa4-fwd"])
    assert not names_recipe_the_old_way(["report", "r/", "--kernel-filter", "Flash", "--kernel-filter=x"])
    assert not names_recipe_the_old_way(["compare", "A", "B", "--param", "kernel=1", "--", "--kernel"])
    assert not names_recipe_the_old_way([])


def test_every_recipe_option_is_recipe_with_kernel_as_its_older_name():
    assert set(RECIPE_COMMANDS) >= {"compare", "report", "check", "bench", "bisect", "sweep"}
    assert with_option("--kernel") == RECIPE_COMMANDS
    for name in RECIPE_COMMANDS:
        opt = option(dict(LEAVES)[name], "--recipe")
        assert opt.opts == ["--recipe", "--kernel"] and opt.name == "kernel" and opt.help == RECIPE_HELP, name


@pytest.mark.parametrize("name", RECIPE_COMMANDS)
def test_every_recipe_command_shows_recipe_in_its_help(name):
    res = run([name, "--help"])
    assert res.exit_code == 0, res.output
    assert "--recipe, --kernel" in res.output and "older name of this option" in res.output, res.output
    ex = res.output[res.output.index("Examples:") :]
    assert "--recipe " in ex and not re.search(r"--kernel\b(?!-)", ex), ex


@pytest.mark.parametrize("name", RECIPE_COMMANDS)
def test_recipe_and_kernel_give_the_same_value(name):
    cmd = dict(LEAVES)[name]
    sides = {"sweep": ["4.8.0"], "bisect": ["--good", "4.5.1", "--bad", "4.8.0", "--metric", "x>0"]}.get(
        name, ["4.5.1", "4.8.0"]
    )
    values = [
        cmd.make_context(name, [*sides, *flag], obj=CliState(args=[])).params["kernel"]
        for flag in (["--recipe", "x.py:f"], ["--kernel", "x.py:f"], ["--kernel=x.py:f"])
    ]
    assert values == ["x.py:f"] * 3


@pytest.mark.parametrize("name", ["compare", "bench", "sweep"])
def test_recipe_and_kernel_end_the_same(name, tmp_path, monkeypatch):
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path))
    sides = ["4.8.0"] if name == "sweep" else ["4.8.0", "4.8.0"]
    new, old = (run([name, *sides, flag, str(tmp_path / "nope.py")]) for flag in ("--recipe", "--kernel"))
    assert new.exit_code == old.exit_code == 2 and new.stdout == old.stdout == ""
    assert old.stderr == f"· {OLD_RECIPE_NOTE}\n" + new.stderr, old.stderr
    assert new.stderr.startswith("error: Recipe file ") and "does not exist" in new.stderr, new.stderr


def test_kernel_gets_a_note_once_and_not_with_quiet(tmp_path):
    note = f"· {OLD_RECIPE_NOTE}"
    assert OLD_RECIPE_NOTE == "--kernel is now called --recipe (--kernel still works)"
    old = run(["report", str(SAMPLE), "--kernel", "fa4-fwd", "-o", str(tmp_path / "a.md")])
    assert old.exit_code == 0, old.output
    assert old.stderr.splitlines()[0] == note and old.stderr.count(note) == 1, old.stderr
    new = run(["report", str(SAMPLE), "--recipe", "fa4-fwd", "-o", str(tmp_path / "b.md")])
    assert new.exit_code == 0 and OLD_RECIPE_NOTE not in new.stderr and "wrote" in new.stderr, new.stderr
    assert (tmp_path / "a.md").read_text() == (tmp_path / "b.md").read_text()
    for quiet in (["-q", "report"], ["report", "--quiet"]):
        res = run([*quiet, str(SAMPLE), "--kernel=fa4-fwd", "-o", str(tmp_path / "c.md"), "--force"])
        assert res.exit_code == 0 and res.stderr == "", res.stderr
    only_filter = run(["report", str(SAMPLE), "--kernel-filter", "Flash", "-o", str(tmp_path / "d.md")])
    assert only_filter.exit_code == 0 and OLD_RECIPE_NOTE not in only_filter.stderr, only_filter.stderr


def test_quiet_silences_progress_and_keeps_results(tmp_path):
    loud = run(["report", str(SAMPLE), "-o", str(tmp_path / "a.md")])
    quiet = run(["report", str(SAMPLE), "-o", str(tmp_path / "b.md"), "-q"])
    assert "wrote" in loud.stderr and quiet.stderr == ""
    assert (tmp_path / "b.md").read_text() == (tmp_path / "a.md").read_text()


def test_verbose_prints_commands_run_and_cache_decisions(tmp_path, monkeypatch):
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path))
    first = run(["diff", str(CUBIN_A), str(CUBIN_B), "-v", "--json", str(tmp_path / "d.json")])
    assert first.exit_code == 0, first.output
    assert re.search(r"run: \S*nvdisasm ", first.stderr), first.stderr
    assert "cache: imported artifacts kernel.cubin import-" in first.stderr and "miss, importing" in first.stderr
    again = run(["-v", "diff", str(CUBIN_A), str(CUBIN_B), "--json", str(tmp_path / "e.json")])
    assert ": hit" in again.stderr
    plain = run(["diff", str(CUBIN_A), str(CUBIN_B), "--json", str(tmp_path / "f.json")])
    assert "run: " not in plain.stderr and "cache: " not in plain.stderr  # the hook is off again


def test_color_always_never_and_no_color(monkeypatch):
    args = ["check", "--result", str(SAMPLE), "--max-spill-bytes", "0"]
    esc = "\x1b["
    assert esc not in run(args).stdout  # a pipe: no colour by default
    assert esc in run([*args, "--color", "always"]).stdout
    assert esc not in run([*args, "--color", "never"]).stdout
    assert esc in run(["--color", "always", *args]).stdout  # on the group too
    monkeypatch.setenv("NO_COLOR", "1")
    assert esc not in run([*args, "--color", "auto"]).stdout
    assert esc in run([*args, "--color", "always"]).stdout  # an explicit flag wins over NO_COLOR
    assert esc not in run(args).stdout  # nothing left over from the last invocation


def test_full_width_into_a_pipe(tmp_path, monkeypatch):
    """A piped table is not cut at 80 columns (env names that ``env remove`` needs were cut)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    deep = tmp_path / ("a-very-long-folder-name-" * 6) / "cache"
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(deep))
    res = run(["cache", "info"])
    assert res.exit_code == 0, res.output
    assert f"cache {deep}" in res.stdout.splitlines()[0]
    from rich.table import Table

    from cutediff_tui.terminal import PIPED_WIDTH, SafeConsole

    buf = io.StringIO()
    t = Table()
    t.add_column("name")
    t.add_column("path")
    t.add_row("dsl-4.8.0-cu13-f38feb73", "/x" * 150)
    SafeConsole(file=buf).print(t)
    assert "/x" * 150 in buf.getvalue() and PIPED_WIDTH >= 1000


# ---------------------------------------------------------------- progress


def _events():
    from cutediff_tui.core.events import (
        BisectStep,
        CellFinished,
        DslImporting,
        EnvStage,
        KernelCompiled,
        SideAnalysed,
    )

    return [
        EnvStage("a", "resolving", "4.8.0", cuda=13),
        EnvStage("a", "ready", "4.8.0", env="dsl-4.8.0", seconds=1.0),
        DslImporting("a", "build", "4.8.0"),
        KernelCompiled("a", "build", 1, "fwd", 2.0),
        SideAnalysed("a", 1),
        CellFinished(None, 3, 12, "4.8.0", "sm_100a hdim=64", seconds=4.0),
        BisectStep(None, "4.5.3", "bad", "spill_store_bytes=16", order=2, bound=6),
        "wrote x.json",
    ]


def test_progress_bars_on_a_terminal_show_elapsed_and_eta():
    from rich.console import Console

    from cutediff_tui.cli.progress import ProgressBars

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=150, color_system=None)
    bars = ProgressBars(console)
    for e in _events():
        bars(e)
    bars.stop()
    text = buf.getvalue()
    for expected in ("side A environment 4.8.0", "side A build (DSL 4.8.0)", "sweep cells", "3/12", "bisect builds"):
        assert expected in text, expected
    assert "elapsed" in text and "ETA" in text
    assert "· side A: build: compiled kernel 1 (fwd) in 2.0 s" in text  # the line log stays above the bars
    assert "wrote x.json" in text


def test_a_print_of_the_cli_clears_the_bars_and_a_later_event_starts_fresh_ones():
    """A result or an error printed while bars run stops and clears them first (issue 37); a
    ``--watch`` recompile then gets new bars, which ``stop_all`` still reaches."""
    from rich.console import Console

    from cutediff_tui.cli import progress
    from cutediff_tui.cli.common import CliConsole

    buf = io.StringIO()
    bars = progress.ProgressBars.start(Console(file=buf, force_terminal=True, width=150, color_system=None), None)
    console = CliConsole(file=buf, force_terminal=True, width=150, color_system=None)
    events = _events()
    bars(events[0])
    assert bars.started and bars.tasks
    console.print("verdict: the result")
    assert not bars.started and not bars.tasks and bars not in progress._ACTIVE
    assert buf.getvalue().rstrip().endswith("verdict: the result")  # nothing drawn after it
    bars(events[0])  # the watch compiles again
    assert bars.started and bars in progress._ACTIVE
    progress.stop_all()
    assert not bars.started and not progress._ACTIVE


def test_progress_is_a_line_log_when_not_a_terminal(tmp_path):
    res = run(["report", str(SAMPLE), "-o", str(tmp_path / "r.html")])
    assert res.stderr.startswith("· wrote ") and "elapsed" not in res.stderr
    assert re.search(r"\(\d+(\.\d)? KB, html\)", res.stderr)  # human-readable size


# ---------------------------------------------------------------- csv, GitHub annotations


def test_report_csv_is_kernel_by_side_by_figure(tmp_path):
    from cutediff_tui.core.model.figures import figures_for

    res = run(["report", str(SAMPLE), "--format", "csv"])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert list(rows[0]) == ["kernel", "side", "toolchain", "figure", "label", "unit", "value"]
    by = {(r["kernel"], r["side"], r["figure"]): r["value"] for r in rows}
    assert by[("FlashAttentionForwardSm100", "b", "stack_bytes")] == "112"
    assert by[("FlashAttentionForwardSm100", "a", "spill_store_bytes")] == "0"
    names = {f.name for f in figures_for("json")}
    assert {r["figure"] for r in rows} <= names and {r["side"] for r in rows} == {"a", "b"}
    assert len(rows) % 2 == 0  # every kernel × figure has both sides
    out = tmp_path / "f.csv"
    assert run(["report", str(SAMPLE), "-o", str(out)]).exit_code == 0  # the suffix picks csv
    assert out.read_text() == res.stdout


def test_csv_cells_never_start_a_spreadsheet_formula():
    from cutediff_tui.core.report.table import render_csv

    comparison = {
        "sides": {"a": {"label": "=cmd|'/c calc'!A1"}, "b": {"label": "4.8.0"}},
        "kernels": [{"name": "@SUM(1)", "a": {"registers": 1}, "b": {"registers": 2}}],
    }
    rows = list(csv.DictReader(io.StringIO(render_csv(comparison))))
    assert rows[0]["kernel"] == "'@SUM(1)" and rows[0]["toolchain"] == "'=cmd|'/c calc'!A1"


def test_check_annotates_github_actions(monkeypatch):
    args = ["check", "--result", str(SAMPLE), "--max-spill-bytes", "0"]
    assert "::error" not in run(args).stdout
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    res = run(args)
    assert res.exit_code == 1
    notes = [ln for ln in res.stdout.splitlines() if ln.startswith("::error ")]
    assert len(notes) == 2
    assert notes[0].startswith(
        "::error title=cutediff check%3A FlashAttentionForwardSm100 max-spill-bytes::spill stores 176 B"
    )
    res = run([*args, "--json", "-"])
    assert "::error" in res.stderr and json.loads(res.stdout)  # stdout keeps only the JSON


# ---------------------------------------------------------------- help and completion


@pytest.mark.parametrize(
    "name", ["", *sorted({n.split()[0] for n in LEAF_NAMES}), *[n for n in LEAF_NAMES if " " in n]]
)
def test_every_help_has_examples(name):
    res = run([*name.split(), "--help"])
    assert res.exit_code == 0
    ex = res.output[res.output.index("Examples:") :]
    assert re.search(rf"^\s+cutediff {re.escape(name)}", ex, re.M), res.output


def _complete(words: str) -> list[str]:
    parts = words.split(" ")
    env = {"_CUTEDIFF_COMPLETE": "bash_complete", "COMP_WORDS": words, "COMP_CWORD": str(len(parts) - 1)}
    res = CliRunner().invoke(main, [], prog_name="cutediff", env=env)
    return [ln.split(",", 1)[1] for ln in res.output.splitlines()]


def test_shell_completion_completes_values(tmp_path, monkeypatch):
    assert "fa4-fwd" in _complete("cutediff compare 4.5.1 4.8.0 --recipe fa4")
    assert "fa4-fwd" in _complete("cutediff compare 4.5.1 4.8.0 --kernel fa4")
    assert {"sm_100a", "sm_103a"} <= set(_complete("cutediff compare 4.5.1 4.8.0 --arch sm_10"))
    assert "sm_90a,sm_100a" in _complete("cutediff sweep 4.8.0 --arch sm_90a,sm_1")
    assert "h200" in _complete("cutediff check --gpu h")
    index = tmp_path / "index"
    index.mkdir()
    (index / "nvidia-cutlass-dsl.json").write_text(json.dumps({"time": 0, "versions": ["4.5.1", "4.8.0", "4.10.0"]}))
    monkeypatch.setenv("CUTEDIFF_CACHE_DIR", str(tmp_path))
    assert _complete("cutediff compare 4.") == ["4.10.0", "4.8.0", "4.5.1"]
    assert _complete("cutediff bisect --good 4.5") == ["4.5.1"]


def test_completion_is_documented():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    assert "_CUTEDIFF_COMPLETE=bash_source" in doc and "zsh" in doc and "fish" in doc


def test_output_to_a_character_device_is_written_not_refused(tmp_path):
    """``-o /dev/null`` (issue 37) drops the report as asked; a link to a device is still refused."""
    res = run(["report", str(SAMPLE), "-o", "/dev/null"])
    assert res.exit_code == 0, res.output
    assert "wrote /dev/null (md)" in res.output and "already exists" not in res.output
    link = tmp_path / "null.md"
    link.symlink_to("/dev/null")
    res = run(["report", str(SAMPLE), "-o", str(link)])
    assert res.exit_code == 2 and "symbolic link" in res.output, res.output


FA4_FLAGS = ("--varlen", "--causal", "--hdim", "--hdim-v", "--heads", "--kv-heads", "--dtype", "--window")


@pytest.mark.parametrize("name", sorted(set(with_option("--hdim"))))
def test_the_fa4_flags_work_but_are_listed_once_by_recipes_not_in_every_help(name):
    """Twelve FA4-only flags filled the --help of compare, report, check, bench and bisect (issue 37):
    `cutediff recipes` lists them per recipe, with defaults; each command still takes them."""
    help_text = run([name, "--help"]).output
    assert not any(re.search(rf"^\s+{flag}\b", help_text, re.M) for flag in FA4_FLAGS), help_text
    assert "cutediff recipes" in help_text
    cmd = dict(LEAVES)[name]
    sides = {"bisect": ["--good", "4.5.1", "--bad", "4.8.0", "--metric", "x>0"]}.get(name, ["4.5.1", "4.8.0"])
    params = cmd.make_context(name, [*sides, "--hdim", "64", "--no-causal"], obj=CliState(args=[])).params
    assert params["hdim"] == 64 and params["causal"] is False


def test_recipes_lists_the_fa4_flags():
    out = run(["recipes"]).output
    assert all(flag in out for flag in FA4_FLAGS), out
