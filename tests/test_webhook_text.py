"""The webhook carries trace text (agent and model names, test case and run ids, error text)
to a chat tool: every such string arrives escaped for it (Slack's `&`, `<`, `>`; a mention's
`@` defused) with no control, bidi or other invisible character, in `text` and in every
field."""

import json
import unicodedata
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from transforms.cli import app
from transforms.ingest import ingest
from transforms.report.webhook import chat_safe
from transforms.verdict.ci_outputs import EXIT_REGRESSED

RUNNER = CliRunner()
LATEST = date(2026, 11, 20)
AGENT = "<!channel> <https://evil.example/login|Click to re-auth>\x1b[2J\u202e"
MODEL = "gpt\u2066-4o & <@U123> @here"
GONE = "gone\x07 @channel\u200b"
CASE = "c\u202e<!here>"
ERROR = "boom \x1b]8;;https://evil.example\x07link\x1b]8;;\x07 <!everyone> & more\u2028next"


def _line(agent: str, model: str, case: str, day: date, status: str, run_id: str) -> dict[
        str, Any]:
    line: dict[str, Any] = {
        "run_id": run_id, "agent": agent, "test_case_id": case,
        "started_at": f"{day.isoformat()}T02:00:00Z", "ended_at": f"{day.isoformat()}T02:00:30Z",
        "outcome": {"status": status}, "response": {"metadata": {"model": model}}}
    if status == "error":
        line["outcome"]["error"] = ERROR
    else:
        line["outcome"]["score"] = 1.0
        line["response"] |= {"final_response": "ok",
                             "messages": [{"role": "assistant", "content": "ok"}]}
    return line


@pytest.fixture(scope="module")
def hostile_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seven days where two agents with hostile names pass their cases, then a night where
    the first crashes on every case (hostile run ids and error text) and the second is gone."""
    root = tmp_path_factory.mktemp("hostile")
    lines = []
    for n in range(7, -1, -1):
        day = LATEST - timedelta(days=n)
        for i in range(3):
            lines.append(_line(AGENT, MODEL, f"{CASE}{i}", day, "error" if n == 0 else "passed",
                               f"r\u202e<!channel>{i}-{day}"))
            if n:
                lines.append(_line(GONE, MODEL, f"{CASE}{i}", day, "passed", f"g{i}-{day}"))
    landing = root / "landing" / "h.responses.jsonl"
    landing.parent.mkdir(parents=True)
    landing.write_text("".join(json.dumps(x) + "\n" for x in lines))
    ingest([landing], root / "home")
    return root / "home"


def _strings(v: Any, where: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(v, str):
        yield where, v
    elif isinstance(v, dict):
        for k, x in v.items():
            yield from _strings(x, f"{where}.{k}")
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from _strings(x, f"{where}[{i}]")


def _unsafe(text: str) -> list[str]:
    """What a chat tool would read as markup or a terminal as a command in `text`."""
    bad = [c for c in text if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp")]
    bad += [c for c in "<>" if c in text]
    bad += [m for m in text.split("&")[1:] if not m.startswith(("amp;", "lt;", "gt;"))]
    bad += ["@"] if "@" in text else []
    return bad


def test_trace_text_reaches_the_webhook_escaped(hostile_home: Path,
                                                webhook: list[dict[str, Any]]) -> None:
    res = RUNNER.invoke(app, ["report", "--home", str(hostile_home), "--fail-on-regression"])
    assert res.exit_code == EXIT_REGRESSED, res.output
    assert len(webhook) == 1
    body = webhook[0]["body"]
    assert body["regressed"] and body["crashed_runs"] and body["missing_test_cases"]
    for where, text in _strings(body):
        if where != ".report":  # the page's path, runlake's own
            assert not _unsafe(text), (where, text)
    agent = "&lt;!channel&gt; &lt;https://evil.example/login|Click to re-auth&gt;[2J"
    model = "gpt-4o &amp; &lt;\uff20U123&gt; \uff20here"
    assert body["text"].count(agent) >= 1 and model in body["text"], body["text"]
    assert {(r["agent"], r["model"]) for r in body["regressed"]} == {(agent, model),
                                                                     ("gone \uff20channel", model)}
    crashed = body["crashed_runs"][0]
    assert crashed["agent"] == agent and crashed["test_case_id"] == "c&lt;!here&gt;0"
    assert crashed["run_id"] == f"r&lt;!channel&gt;0-{LATEST}"
    # The error's first line (U+2028 ends it), its escape sequences' ESC and BEL removed.
    assert crashed["error"] == "boom ]8;;https://evil.examplelink]8;; &lt;!everyone&gt; &amp; more"
    assert {c["agent"] for c in body["missing_test_cases"]} == {"gone \uff20channel"}


@pytest.mark.parametrize(("raw", "safe"), [
    ("<!channel>", "&lt;!channel&gt;"),
    ("a & b", "a &amp; b"),
    ("&lt; already", "&amp;lt; already"),  # escaped as it is, never unescaped
    ("<https://x.example|y>", "&lt;https://x.example|y&gt;"),
    ("@here @channel @everyone @all @U123", "\uff20here \uff20channel \uff20everyone \uff20all "
                                            "\uff20U123"),
    ("mail@example.com", "mail@example.com"),  # not a mention: kept
    # A Markdown link (Mattermost, Teams, Discord) is no link once `](` is apart.
    ("[Click to re-auth](https://evil.example/login)",
     "[Click to re-auth] (https://evil.example/login)"),
    ("list[int] (x)", "list[int] (x)"),
    ("\x1b[31mred\x1b[0m", "[31mred[0m"),
    ("a\u202eb\u2066c\u2069d\u200fe\u061cf", "abcdef"),
    ("zero\u200bwidth\ufeff", "zerowidth"),
    ("two\nlines\tand\rmore\u2028x\u2029y\x85z", "two lines and more x y z"),
    ("nul\x00 del\x7f c1\x9b", "nul del c1"),
    ("ünïcödé 日本語 🙂", "ünïcödé 日本語 🙂"),
])
def test_chat_safe(raw: str, safe: str) -> None:
    assert chat_safe(raw) == safe
