"""The verdict in the formats CI systems read, for `runlake report` and `runlake compare`
alike: JUnit XML (each agent × model pair, or group, a `testsuite`; each check a `testcase`:
a regression a `<failure>`, too little evidence `<skipped>`), a Markdown summary for a pull
request comment or `$GITHUB_STEP_SUMMARY`, and GitHub Actions' `::error::` / `::warning::`
workflow commands; and the exit code of a verdict that fails a gate.

Names and messages hold trace text (agent, model and test case names): the XML is written by
ElementTree (escaped), with the characters XML 1.0 cannot hold removed; an annotation is one
line with GitHub's own escapes, so no name can start a workflow command of its own.
"""

import os
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

PASSED, FAILURE, SKIPPED = "passed", "failure", "skipped"

EXIT_REGRESSED = 3
"""The exit code of `runlake report --fail-on-regression` when anything regressed, and of
`runlake compare` when a group regressed (1 is an error of runlake itself, 2 a bad argument or
input)."""


@dataclass
class Check:
    """One testcase: `outcome` passed, failure or skipped, with a one-line `message`."""

    name: str
    outcome: str = PASSED
    message: str = ""
    detail: str = ""


@dataclass
class Suite:
    """One testsuite: an agent × model pair (report) or a group (compare)."""

    name: str
    checks: list[Check] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _xml_text(text: object) -> str:
    return _NOT_XML.sub("\ufffd", "" if text is None else str(text))


def junit_xml(suites: Iterable[Suite], name: str) -> bytes:
    """The suites as a JUnit XML document (`<testsuites>` with counts at every level)."""
    suites = list(suites)
    root = ET.Element("testsuites", name=_xml_text(name))
    totals: dict[str, int] = {"tests": 0, "failures": 0, "skipped": 0}
    for s in suites:
        el = ET.SubElement(root, "testsuite", name=_xml_text(s.name))
        counts = {"tests": len(s.checks),
                  "failures": sum(c.outcome == FAILURE for c in s.checks),
                  "skipped": sum(c.outcome == SKIPPED for c in s.checks)}
        for k, v in counts.items():
            el.set(k, str(v))
            totals[k] += v
        el.set("errors", "0")
        if s.properties:
            props = ET.SubElement(el, "properties")
            for key, value in s.properties.items():
                ET.SubElement(props, "property", name=_xml_text(key), value=_xml_text(value))
        for c in s.checks:
            case = ET.SubElement(el, "testcase", name=_xml_text(c.name),
                                 classname=_xml_text(s.name))
            if c.outcome == FAILURE:
                ET.SubElement(case, "failure", message=_xml_text(c.message),
                              type="regression").text = _xml_text(c.detail or c.message)
            elif c.outcome == SKIPPED:
                ET.SubElement(case, "skipped", message=_xml_text(c.message))
            elif c.message:
                ET.SubElement(case, "system-out").text = _xml_text(c.message)
    for k, v in totals.items():
        root.set(k, str(v))
    root.set("errors", "0")
    ET.indent(root)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8") \
        + b"\n"


def write_junit(path: Path, suites: Iterable[Suite], name: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(junit_xml(suites, name))


def markdown_targets(path: Path | None) -> list[tuple[Path, bool]]:
    """Where the Markdown summary goes, each with whether it is appended to: `path` (written
    afresh), else `$GITHUB_STEP_SUMMARY` when set (appended to, as GitHub expects; also when
    `path` names that same file)."""
    step = os.environ.get("GITHUB_STEP_SUMMARY")
    if path is not None:
        return [(path, bool(step) and Path(str(step)).resolve() == path.resolve())]
    return [(Path(step), True)] if step else []


def write_markdown(text: str, path: Path | None) -> list[Path]:
    """Write (or append) the summary to its targets (markdown_targets); the files written."""
    done = []
    for target, append in markdown_targets(path):
        with target.open("a" if append else "w", encoding="utf-8") as f:
            f.write(text.rstrip("\n") + "\n\n" if append else text.rstrip("\n") + "\n")
        done.append(target)
    return done


def in_github_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


_CONTROL = re.compile("[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(text: str) -> str:
    """A workflow command's message: % CR LF as GitHub's %25 %0D %0A (one line), and other
    control characters (escape sequences, bidi overrides) spelled out as \\xNN."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return _CONTROL.sub(lambda m: m[0].encode("unicode_escape").decode(), text)


def _escape_property(text: str) -> str:
    return _escape(text).replace(":", "%3A").replace(",", "%2C")


def annotate(errors: Iterable[str], warnings: Iterable[str], title: str,
             stream: TextIO | None = None) -> int:
    """Print `::error title=…::message` and `::warning …` lines when GITHUB_ACTIONS=true;
    the number printed (0 elsewhere)."""
    if not in_github_actions():
        return 0
    stream = stream or sys.stdout
    n = 0
    for level, messages in (("error", errors), ("warning", warnings)):
        for m in messages:
            stream.write(f"::{level} title={_escape_property(title)}::{_escape(m)}\n")
            n += 1
    stream.flush()
    return n
