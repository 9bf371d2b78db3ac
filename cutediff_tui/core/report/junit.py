"""JUnit XML of a check: one testcase per kernel × limit (CI systems show them as tests)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from .check import ERROR, FAIL, SKIP, CheckResult

_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: object) -> str:
    """Text XML 1.0 can hold (control characters dropped); ElementTree escapes the rest."""
    return _XML_BAD.sub("", str(text))


def junit_xml(result: CheckResult, suite: str = "cutediff check") -> str:
    """The check as a JUnit XML document (``testsuites`` > ``testsuite`` > ``testcase``)."""
    outs = result.outcomes
    counts = {
        "tests": str(len(outs)),
        "failures": str(sum(o.status == FAIL for o in outs)),
        "errors": str(sum(o.status == ERROR for o in outs)),
        "skipped": str(sum(o.status == SKIP for o in outs)),
        "time": "0",
    }
    root = ET.Element("testsuites", {"name": "cutediff", **counts})
    ts = ET.SubElement(
        root, "testsuite", {"name": _clean(suite + (f": {result.title}" if result.title else "")), **counts}
    )
    if result.notes:
        props = ET.SubElement(ts, "properties")
        for i, note in enumerate(result.notes):
            ET.SubElement(props, "property", {"name": f"note{i + 1}", "value": _clean(note)})
    for o in outs:
        tc = ET.SubElement(
            ts, "testcase", {"classname": _clean(f"cutediff.{o.kernel}"), "name": _clean(o.limit), "time": "0"}
        )
        if o.status == FAIL:
            el = ET.SubElement(tc, "failure", {"message": _clean(o.message), "type": _clean(o.limit)})
            el.text = _clean(f"{o.kernel}: {o.message}")
        elif o.status == ERROR:
            el = ET.SubElement(tc, "error", {"message": _clean(o.message), "type": _clean(o.limit)})
            el.text = _clean(f"{o.kernel}: {o.message}")
        elif o.status == SKIP:
            ET.SubElement(tc, "skipped", {"message": _clean(o.message)})
        else:
            so = ET.SubElement(tc, "system-out")
            so.text = _clean(o.message)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
