"""Metric expressions: parsed with ast, evaluated without eval, one sentence for bad input."""

import pytest

from cutediff_tui.core.errors import CutediffError
from cutediff_tui.core.metric import figures_of, parse_metric

FIG = {
    "registers": 128,
    "stack_bytes": 112,
    "spill_store_bytes": 176,
    "spill_load_bytes": 176,
    "stl": 44,
    "UTCHMMA": 64,
    "mufu": 398,
}


@pytest.mark.parametrize(
    "text,expected",
    [
        ("spill_store_bytes>0", True),
        ("spill_store_bytes>176", False),
        ("registers>168", False),
        ("registers>=128 and stack_bytes>0", True),
        ("registers>200 or STL>40", False),  # STL (opcode) absent from FIG -> 0
        ("registers>200 or stl>40", True),
        ("not stack_bytes", False),
        ("0 < spill_store_bytes <= 176", True),
        ("UTCHMMA == 64", True),
        ("HGMMA > 0", False),
        ("mufu > 300", True),
    ],
)
def test_predicates(text, expected):
    assert parse_metric(text, predicate=True).holds(FIG) is expected


def test_values_and_shown():
    m = parse_metric("spill_store_bytes + spill_load_bytes", predicate=False)
    assert m.value(FIG) == 352
    assert parse_metric("stack_bytes / 0").value(FIG) == float("inf")
    assert parse_metric("spill_store_bytes>0").shown(FIG) == "spill_store_bytes=176"


@pytest.mark.parametrize(
    "text,needle",
    [
        ("spill_store_bytes >", "not an expression"),
        ("spill_store_bytes>>0", "rshift syntax"),
        ("__import__('os').system('x')", "call syntax"),
        ("spill_store_byte>0", "Did you mean spill_store_bytes"),
        ("registers > 'a'", "not a number"),
        ("", "empty"),
        ("registers.real > 1", "attribute syntax"),
    ],
)
def test_bad_metrics_are_one_sentence(text, needle):
    with pytest.raises(CutediffError) as e:
        parse_metric(text)
    assert needle in e.value.sentence()
    assert "\n" not in e.value.sentence()


def test_predicate_or_value_required():
    with pytest.raises(CutediffError, match="is a value, not a predicate"):
        parse_metric("registers", predicate=True)
    with pytest.raises(CutediffError, match="is a predicate, not a value"):
        parse_metric("registers>1", predicate=False)


def test_missing_resource_figure_is_a_sentence():
    with pytest.raises(CutediffError, match="did not give"):
        parse_metric("peak_gpr > 1").value({"registers": 1})


def test_figures_of_a_comparison_side():
    """The flat figures of a real kernel record (the bundled sample's B side)."""
    from cutediff_tui.core.compare import load_json
    from cutediff_tui.samples import default_sample

    comp = load_json(default_sample())
    fwd = next(k for k in comp["kernels"] if "Forward" in k["name"])
    f = figures_of(fwd["b"])
    assert f["spill_store_bytes"] == 176 and f["stack_bytes"] == 112 and f["registers"] == 128
    assert f["UTCHMMA"] == 64 and f["MUFU"] == 398 and f["mufu"] == 398
    assert f["peak_gpr"] > 128
    assert parse_metric("spill_store_bytes>0").holds(f)
    assert not parse_metric("spill_store_bytes>0").holds(figures_of(fwd["a"]))


def test_keyword_class_names_and_case():
    f = {"global": 66, "registers": 128}
    from cutediff_tui.core.metric import figures_of

    flat = figures_of({"instruction_classes": {"global": 66}, "registers": 128})
    assert parse_metric("global>60").holds(flat) and parse_metric("global_ > 60").holds(flat)
    assert f["global"] == flat["global_"]
    for text, needle in (
        ("Registers>168", "figures are written in lower case. Write registers"),
        ("MUFU.EX2 > 0", "names the opcode variant MUFU.EX2; metrics count base opcodes. Write MUFU"),
    ):
        with pytest.raises(CutediffError) as e:
            parse_metric(text)
        assert needle in e.value.sentence()
    assert parse_metric("(0 - stack_bytes) / 0").value({"stack_bytes": 8}) == float("-inf")
