"""What the nightly report and `runlake compare` share to write a verdict
(transforms.verdict): trace text in a Markdown cell, and hostile names in CI's formats."""

from pathlib import Path

import junitparser
import pytest


def test_markdown_cells_stay_one_line_of_text() -> None:
    """Trace text in a Markdown cell ($GITHUB_STEP_SUMMARY, --markdown) keeps the table's rows
    and shows as text: no line break of any kind, no terminal control, no entity."""
    from transforms.verdict.formatting import md

    for name in ("a\rb", "a\r\nb", "a\nb", "a\u2028b", "a\u2029b", "a\x0bb", "a\x0cb",
                 "a\x85b"):
        assert md(name) == "a b", repr(name)
    assert md("bell\x07 esc\x1b[31mred") == "bell  esc \\[31mred"
    assert md("nul\x00") == "nul "
    assert md("&lt;script&gt; & co") == "&amp;lt;script&amp;gt; &amp; co"
    assert md("x | y") == "x \\| y"
    assert md("\u202eevil") == "U+202Eevil"
    assert md("abc|", most=3) == "abc" and md("ab|d", most=3) == "ab\\|"
    assert md(None) == ""


def test_ci_formats_hold_hostile_names(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A name with a line break, a workflow command, XML markup and control characters stays
    one annotation line and well-formed XML."""
    import io

    from transforms.verdict import ci_outputs as ci

    name = "evil\n::error::forged %0A <x/> \x1b[31m\x00"
    stream = io.StringIO()
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert ci.annotate([name], [name], "t,itle:x", stream) == 2
    lines = stream.getvalue().splitlines()
    assert lines == [f"::{level} title=t%2Citle%3Ax::evil%0A::error::forged %250A <x/> "
                     "\\x1b[31m\\x00" for level in ("error", "warning")]
    monkeypatch.setenv("GITHUB_ACTIONS", "false")
    assert ci.annotate([name], [], "t", stream) == 0
    path = tmp_path / "hostile.xml"
    ci.write_junit(path, [ci.Suite(name, [ci.Check(name, ci.FAILURE, name)])], name)
    (suite,) = junitparser.JUnitXml.fromfile(str(path))
    assert suite.name.startswith("evil\n::error::forged %0A <x/>")
    (case,) = suite
    assert isinstance(case.result[0], junitparser.Failure)
