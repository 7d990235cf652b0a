"""The nightly report: on the samples it names the planted drop first with its q-value and no
stable pair; the page is self-contained; hostile trace text renders as text in headless
Chromium and no script runs."""

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.conftest import SamplesLake
from transforms import warehouse
from transforms.cli import app
from transforms.ingest import ingest
from transforms.report import write_report

REPO = Path(__file__).resolve().parent.parent
RUNNER = CliRunner()


@pytest.fixture(scope="module")
def samples_home(samples_lake: SamplesLake) -> Path:
    """The session's samples lake (its reports folder is the only one written)."""
    return samples_lake.home


def test_report_names_the_planted_drop_first(samples_home: Path) -> None:
    res = RUNNER.invoke(app, ["report", "--home", str(samples_home)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    # The window is the 7 days before; the samples start on 2026-11-14, so the baseline is
    # named by its days with runs, not from 2026-11-13.
    assert lines[0].startswith("2026-11-20: 71 runs against 2026-11-14 to 2026-11-19")
    # The significant regressions are the planted drops, each tested on its same test cases and
    # corrected for the night's pairs: travel-agent's, then the trace-only agent's (its runs
    # made from its traces, graded by their evaluation events); no stable pair. The trace-only
    # agent's one crash in 12 runs after none in 72 is named, not a significant rise (Fisher:
    # 12 / 84 = 0.14).
    regressions = [line for line in lines if "REGRESSION" in line]
    assert regressions == [
        "  REGRESSION travel-agent / gpt-4o: pass rate 76% -> 25% "
        "(on the same 12 test cases p = 0.00026, q = 0.00092)",
        "  REGRESSION triage-agent / gpt-4.1: pass rate 96% -> 36% (on the same 11 test cases "
        "p = 5.6e-08, q = 3.9e-07)"]
    assert "  CRASHED triage-agent / gpt-4.1: 1 run (TimeoutError: the ticket API did not " \
        "answer in 30 s)" in lines
    # Nothing is set aside as flaky; pairs with too few graded runs say so.
    assert not any("flaky" in line for line in lines)
    assert "  NOT ENOUGH EVIDENCE support-bot / gpt-4.1: 5 graded runs: a drop under 68 " \
        "points would not show" in lines
    # The one regular test case with no readable run on the day: its line is a planted
    # truncated JSON line (quarantined), so the case did not run as far as the record goes.
    assert [line for line in lines if "MISSING" in line] == [
        "  MISSING support-bot / gpt-4.1: 1 test case not run (support-bot/case-003)"]
    page = (samples_home / "reports" / "nightly-2026-11-20.html").read_text()
    first_card = page.index('<div class="card bad">')
    assert page.index("travel-agent · gpt-4o", first_card) < page.index("</div>", first_card)
    assert page.count('<div class="card bad">') == 2
    # The sections come in the promised order.
    order = [page.index(h) for h in ("1. What regressed", "2. Crashed runs",
                                     "3. Test cases that changed",
                                     "4. Pass rate per agent and model",
                                     "5. Tokens, cost and runtime", "6. Tool use",
                                     "7. Flags by code")]
    assert order == sorted(order)
    assert "travel-agent/case-003" in page  # a pass -> fail flip with its transcript
    assert "✓✓✓✓✓✓ | ✗" in page  # its outcome history
    assert "flaky" not in page
    assert "Not enough evidence to say" in page


def test_readme_quotes_the_page_headline(samples_home: Path) -> None:
    """The headline the README quotes is the one the samples' page shows (and the screenshot
    beside it, docs/nightly-report.png, is taken of that page by devtools.screenshots)."""
    page = write_report(samples_home).path.read_text()
    headline = re.search(r'<p class="headline [a-z]+">(.*?)</p>', page, re.S)
    assert headline
    shown = " ".join(headline[1].split())
    readme = " ".join((REPO / "README.md").read_text().split())
    quoted = re.search(r'Its headline on the samples reads "(.*?)"', readme)
    assert quoted and quoted[1] == shown
    assert "<h1>runlake nightly report · 2026-11-20</h1>" in page


def test_report_is_self_contained(samples_home: Path) -> None:
    summary = write_report(samples_home, baseline_days=3)
    page = summary.path.read_text()
    assert summary.baseline_start.isoformat() == "2026-11-17"
    for needle in ("http://", "https://", "//cdn", "<script", "<link", "src=", "@import",
                   "url("):
        assert needle not in page.lower(), needle
    assert page.count("<svg") >= 3


def test_report_errors_are_clear(tmp_path: Path, samples_home: Path) -> None:
    res = RUNNER.invoke(app, ["report", "--home", str(tmp_path / "none")])
    assert res.exit_code == 2 and "no warehouse" in res.output
    res = RUNNER.invoke(app, ["report", "--home", str(samples_home), "--day", "2026-13-01"])
    assert res.exit_code == 2 and "not a date" in res.output
    res = RUNNER.invoke(app, ["report", "--home", str(samples_home), "--day", "2026-10-01"])
    assert res.exit_code == 2 and "no runs on 2026-10-01" in res.output


def _section(page: str, heading: str) -> str:
    start = page.index(heading)
    return page[start:page.index("</section>", start)]


def test_changes_stay_on_one_line(samples_home: Path) -> None:
    """A "baseline → latest" figure is one unbreakable piece: "72 → 12" never wraps."""
    page = write_report(samples_home).path.read_text()
    assert ".change{white-space:nowrap}" in page
    # travel-agent · gpt-4o: 72 runs in the baseline, 12 on the latest day.
    assert '<td class="change">72 → 12</td>' in page
    # Every figure-to-figure arrow on the page sits inside a nowrap element (the words
    # "pass → fail" are labels, not figures).
    loose = re.findall(r">([^<>]*\d%? → [^<>]*)<", page)
    wrapped = re.findall(r'class="change">([^<>]*)<', page)
    assert loose and set(loose) <= set(wrapped)


def test_trend_charts_leave_out_pairs_without_figures_and_tick_round_numbers(
        samples_home: Path) -> None:
    """The run with no run_id, agent, model or tokens (the planted `run_id_missing` line) is
    `unknown · unknown` in the warehouse: it has no tokens or cost, so it has no line and no
    legend entry. A pair whose traces name no model has its tokens charted under that name
    said plainly. Gridlines are round numbers."""
    page = write_report(samples_home).path.read_text()
    trends = _section(page, "5. Tokens, cost and runtime")
    assert "unknown · unknown" not in trends
    assert "OrchestratorAgent · no model named" in trends
    assert "OrchestratorAgent · unknown" not in trends
    # A pair keeps its colour from chart to chart, whichever pairs each chart leaves out.
    swatches = re.findall(r'background:(#[0-9a-f]{6})"></span>travel-agent · gpt-4o<', trends)
    assert len(swatches) == 3 and len(set(swatches)) == 1
    labels = [x for x in re.findall(r'class="axis" text-anchor="end">([^<]+)<', trends)
              if not re.fullmatch(r"\d\d-\d\d", x)]  # the last day's tick is anchored end
    # tokens, cost, runtime: 0 to the first round value above the largest, 3 to 5 lines each.
    assert len(labels) >= 9
    for label in labels:
        value = label.removesuffix(" ms")
        number = float(value.removesuffix("k").replace(",", "")) * (
            1000 if value.endswith("k") else 1)
        # A multiple of 1, 2, 2.5 or 5 times a power of ten: never 7,515.
        assert number == 0 or any(
            abs(number / (m * 10 ** e) - round(number / (m * 10 ** e))) < 1e-9
            and round(number / (m * 10 ** e)) <= 4
            for m in (1, 2, 2.5, 5) for e in range(-6, 7)), label


def test_round_ticks_by_hand() -> None:
    from transforms.report.charts import round_ticks
    from transforms.verdict.formatting import num

    # 7,515 / 4 = 1,878.75 -> steps of 2,000 (4 x 2,000 = 8,000 >= 7,515).
    assert round_ticks(7515) == [0, 2000, 4000, 6000, 8000]
    # 0.0123 / 4 = 0.003075 -> 0.005 (4 x 0.002 = 0.008 < 0.0123); 0.0123 / 0.005 = 2.46 -> 3.
    assert round_ticks(0.0123) == [0, 0.005, 0.01, 0.015]
    # 1,104 / 4 = 276 -> 500 (4 x 250 = 1,000 < 1,104); 1,104 / 500 = 2.2 -> 3 steps.
    assert round_ticks(1104) == [0, 500, 1000, 1500]
    assert round_ticks(0) == [0, 0.25, 0.5, 0.75, 1]  # nothing to chart: 0 to 1
    assert [num(v) for v in (0, 2000, 0.015, 0.00002, 15000, 2.5)] == [
        "0", "2,000", "0.015", "0.00002", "15k", "2.5"]


def test_baseline_names_only_days_with_runs() -> None:
    from datetime import date, timedelta

    from transforms.report.nightly import Verdict

    d = date(2026, 11, 20)
    window = (d - timedelta(days=7), d - timedelta(days=1))  # 11-13 to 11-19
    days = [date(2026, 11, n) for n in (14, 15, 16, 17, 18, 19)]
    assert Verdict(d, *window, baseline_run_days=days).baseline_span() == \
        "2026-11-14 to 2026-11-19"
    # 11-14 and 11-17: a span of 4 days of which 2 have runs.
    assert Verdict(d, *window, baseline_run_days=[days[0], days[3]]).baseline_span() == \
        "2026-11-14 to 2026-11-17 (2 days with runs)"
    assert Verdict(d, *window, baseline_run_days=[days[1]]).baseline_span() == "2026-11-15"
    assert Verdict(d, *window).baseline_span() == "no runs in the 7 days before"


HOSTILE_AGENT = "<script>alert(1)</script>"
HOSTILE_MODEL = "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">"
HOSTILE_TEXT = "</pre><script>document.title='pwned'</script><b>bold?</b>"


def _hostile_lines() -> list[dict[str, Any]]:
    def run(rid: str, day: str, status: str) -> dict[str, Any]:
        return {"run_id": rid, "agent": HOSTILE_AGENT, "test_case_id": "case<1>",
                "started_at": f"{day}T10:00:00Z", "outcome": {"status": status},
                "response": {"final_response": HOSTILE_TEXT,
                             "metadata": {"model": HOSTILE_MODEL},
                             "messages": [
                                 {"role": "user", "content": HOSTILE_TEXT},
                                 {"role": "assistant", "content": None, "tool_calls": [
                                     {"id": "c1", "name": "<svg onload=alert(2)>",
                                      "arguments": {"q": "\"><script>alert(3)</script>"}}]},
                                 {"role": "tool", "tool_call_id": "c1", "content": HOSTILE_TEXT},
                                 {"role": "assistant", "content": HOSTILE_TEXT}]}}
    return [run("h1", "2026-11-18", "passed"), run("h2", "2026-11-19", "passed"),
            run("h3", "2026-11-20", "failed")]


def test_hostile_trace_text_is_escaped(write_lines: Callable[..., Path], home: Path) -> None:
    ingest([write_lines(_hostile_lines())], home)
    page = write_report(home).path.read_text()
    assert HOSTILE_AGENT not in page and "<img" not in page and "<svg onload" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "case&lt;1&gt;" in page  # the flip and its transcript are on the page


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(_chromium() is None and not os.environ.get("RUNLAKE_REQUIRE_CHROMIUM"),
                    reason="Debian's chromium is not installed (.ci/run installs it)")
def test_hostile_report_renders_as_text_in_chromium(write_lines: Callable[..., Path],
                                                    home: Path, tmp_path: Path) -> None:
    """Chromium loads the page offline: the hostile names show as text, the DOM holds no
    script or img element, and neither the onerror handler nor a script changed the page."""
    browser = _chromium()
    assert browser is not None, "chromium is required here (RUNLAKE_REQUIRE_CHROMIUM is set)"
    ingest([write_lines(_hostile_lines())], home)
    path = write_report(home).path
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=3000"]
    dom = subprocess.run([browser, *flags, "--dump-dom", path.as_uri()], capture_output=True,
                         text=True, timeout=120).stdout
    assert "runlake nightly report" in dom, dom[:500]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert not re.search(r"<(script|img|iframe|object|embed)\b", dom, re.I)
    assert "<svg onload" not in dom
    body = re.search(r"<body[^>]*>", dom)
    assert body is not None and "data-pwned" not in body.group(0)
    assert re.search(r"<title>runlake nightly 2026-11-20</title>", dom)
    shot = tmp_path / "report.png"
    subprocess.run([browser, *flags, "--window-size=1280,1600", f"--screenshot={shot}",
                    path.as_uri()], capture_output=True, timeout=120, check=True)
    assert shot.stat().st_size > 10_000


def test_bidi_controls_from_traces_cannot_reorder_the_page() -> None:
    from transforms.report import esc

    assert esc("gpt\u202e<b>4o") == "gptU+202E&lt;b&gt;4o"
    assert esc("\u2066x\u2069") == "U+2066xU+2069"


PAYLOADS = ["<script>alert(1)</script>", "\"><img src=x onerror=alert(1)>", "</textarea>",
            "{{7*7}}"]
ALL_PAYLOADS = "".join(PAYLOADS)


class _Page(HTMLParser):
    """The elements, attributes and text of a page as a browser's parser would see them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attrs: list[tuple[str, str]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attrs += [(name, value or "") for name, value in attrs]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


REPORT_TAGS = {"html", "head", "meta", "title", "style", "body", "main", "header", "h1", "h2",
               "h3", "h4", "p", "section", "div", "span", "b", "code", "table", "tr", "th", "td",
               "dl", "dt", "dd", "ul", "ol", "li", "details", "summary", "pre", "svg", "line",
               "text", "polygon", "polyline", "circle", "footer"}
REPORT_ATTRS = {"lang", "charset", "name", "content", "http-equiv", "class", "style", "viewbox",
                "width", "height", "role", "x1", "x2", "y1", "y2", "x", "y", "text-anchor",
                "points", "cx", "cy", "r", "fill", "stroke", "stroke-width"}


def test_hostile_names_ids_responses_and_arguments_stay_text(
        write_lines: Callable[..., Path], home: Path) -> None:
    """Markup, a closing tag, an attribute breakout, a template expression and a bidi control
    in the agent, model, test case id, final response, tool name and arguments: each is on the
    page as text (cards, tables, transcripts, chart labels and legends), and the parsed page
    holds only the report's own elements and attributes."""
    def run(rid: str, day: str, status: str) -> dict[str, Any]:
        return {"run_id": rid, "agent": PAYLOADS[0] + "\u202e" + PAYLOADS[3],
                "test_case_id": PAYLOADS[2] + PAYLOADS[3], "started_at": f"{day}T10:00:00Z",
                "outcome": {"status": status},
                "response": {"final_response": ALL_PAYLOADS,
                             "metadata": {"model": PAYLOADS[1], "total_input_tokens": 900,
                                          "total_output_tokens": 100,
                                          "agent_runtime_ms": 1500},
                             "messages": [
                                 {"role": "user", "content": ALL_PAYLOADS},
                                 {"role": "assistant", "content": None, "tool_calls": [
                                     {"id": "c1", "name": "lookup" + PAYLOADS[1],
                                      "arguments": {"q": ALL_PAYLOADS}}]},
                                 {"role": "tool", "tool_call_id": "c1", "content": "ok"},
                                 {"role": "assistant", "content": ALL_PAYLOADS}]}}

    ingest([write_lines([run("h1", "2026-11-18", "passed"), run("h2", "2026-11-19", "passed"),
                         run("h3", "2026-11-20", "failed")])], home)
    page = write_report(home).path.read_text()
    parsed = _Page()
    parsed.feed(page)
    parsed.close()
    assert parsed.tags <= REPORT_TAGS, parsed.tags - REPORT_TAGS
    assert {name for name, _ in parsed.attrs} <= REPORT_ATTRS
    assert not [v for _, v in parsed.attrs if "alert" in v or "<" in v or "{{" in v]
    text = "".join(parsed.text)
    # Each one shows as itself: the agent (its bidi control spelled out), the model, the test
    # case id, the final response and the transcript, and the tool's arguments (as JSON).
    assert "<script>alert(1)</script>U+202E{{7*7}} · \"><img src=x onerror=alert(1)>" in text
    assert "</textarea>{{7*7}}" in text
    assert "lookup\"><img src=x onerror=alert(1)>" in text  # the transcript and tool shares
    # The trend charts' legends and point labels name the agent and model too: tokens and
    # runtime (the model has no price, so the cost chart has no line for it).
    assert page.count('<span class="swatch" style="background:#2563eb"></span>&lt;script&gt;') == 2
    assert re.search(r"<title>&lt;script&gt;[^<]* 2026-11-20: 1,000</title>", page)
    assert text.count(ALL_PAYLOADS) >= 3
    assert '{"q":"<script>alert(1)</script>\\"><img src=x onerror=alert(1)></textarea>' \
           '{{7*7}}"}' in text
    assert not re.search("[\u202a-\u202e\u2066-\u2069]", page)
    # Escaped in the source, not only parsed as text by a forgiving parser.
    for escaped in ("&lt;script&gt;alert(1)&lt;/script&gt;",
                    "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;", "&lt;/textarea&gt;"):
        assert escaped in page


def test_templates_escape_every_value() -> None:
    """Autoescaping is on for every template whatever its name, values pass the bidi rule
    first, and nothing in the templates or the report's code marks text safe."""
    from transforms.report.page import environment

    env = environment()
    assert env.from_string("{{ x }}").render(x="<b a='1'>\u202e") == \
        "&lt;b a=&#39;1&#39;&gt;U+202E"
    templates = REPO / "transforms" / "templates" / "report"
    assert {p.name for p in templates.iterdir()} >= {"nightly.html", "charts.html",
                                                     "runs.html", "report.css"}
    for path in templates.iterdir():
        text = path.read_text()
        assert not re.search(r"\|\s*safe|autoescape\s+false|Markup", text), path
    for path in [*(REPO / "transforms" / "report").glob("*.py"),
                 *(REPO / "transforms" / "verdict").glob("*.py")]:
        calls = re.findall(r"Markup\(", path.read_text())
        assert calls == (["Markup("] if path.name == "formatting.py" else []), path


def test_pairs_without_an_agent_or_model_come_after_the_named_ones(
        write_lines: Any, home: Path) -> None:
    """The verdict table puts the runs that name no agent or model (`unknown`) after the real
    pairs of the same standing, even when their q-value is the smaller one."""
    def run(agent: str | None, case: str, day: int, status: str) -> dict[str, Any]:
        line: dict[str, Any] = {
            "run_id": f"{agent}-{case}-{day}", "test_case_id": case,
            "started_at": f"2026-11-{day}T01:00:00Z", "outcome": {"status": status},
            "response": {"final_response": "ok",
                         "metadata": {"model": "gpt-4o"} if agent else {}}}
        if agent:
            line["agent"] = agent
        return line

    lines = [run("named", f"n{i}", day, "passed" if day < 20 or i else "failed")
             for day in (18, 19, 20) for i in range(10)]
    lines += [run(None, f"u{i}", day, "passed" if day < 20 or i > 1 else "failed")
              for day in (18, 19, 20) for i in range(10)]
    ingest([write_lines(lines)], home)
    res = RUNNER.invoke(app, ["report", "--home", str(home)])
    assert res.exit_code == 0, res.output
    con = warehouse.connect(home)
    try:
        q = dict(con.execute("select agent, q_value from v_regressions").fetchall())
    finally:
        con.close()
    assert q["unknown"] < q["named"], q  # the unnamed pair's drop is the clearer one
    page = (home / "reports" / "nightly-2026-11-20.html").read_text()
    table = page[page.index("<h3 style=\"margin-top:16px\">Every agent and model</h3>"):]
    table = table[:table.index("</table>")]
    pairs = re.findall(r"<tr class=\"[^\"]*\"><td>([^<]*)</td>", table)
    assert pairs == ["named · gpt-4o", "unknown · unknown"], pairs
