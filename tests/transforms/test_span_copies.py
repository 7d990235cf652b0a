"""A span delivered more than once (an exporter's retry, a receiver that died after its fsync
and before its 200, the same span in two files) is one span: the copy read last is kept, and
its LLM call, tokens, cost, messages and findings count once."""

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MemoryViews
from tests.transforms.receiving import Served, json_request, json_span, post
from tests.transforms.test_spans import llm, run, span
from transforms import warehouse
from transforms.ingest import ingest
from transforms.receiver import decode as otlp

RUNLAKE = Path(sys.executable).parent / "runlake"


def _night(write_lines: Callable[..., Path]) -> tuple[list[dict[str, Any]], Path]:
    """A run whose tokens come from its one LLM call (100,000 in, 50,000 out, priced by the
    table: gpt-4o at 2.50 / 10.00 USD per million tokens = 0.25 + 0.50 = 0.75 USD), the
    call's span with a malformed-content finding, and the run's responses file."""
    call = llm("gpt-4o", 100_000, 50_000)
    del call["price"]
    call["input"]["messages"].append({"role": "user", "content": "a plain string"})
    spans = [span("root", trace_id="t1", end_ms=5000, attrs={"run_id": "r1"}),
             span("call", trace_id="t1", parent="root", start_ms=100, end_ms=1600,
                  attrs={"run_id": "r1"}, log_request=call)]
    responses = write_lines([run("r1", "t1")], name="a.responses.jsonl")
    return spans, responses


def _counts(con: Any) -> dict[str, Any]:
    one = con.execute("""SELECT
        (SELECT count(*) FROM spans), (SELECT count(*) FROM llm_calls),
        (SELECT count(*) FROM messages WHERE source = 'span'),
        (SELECT count(*) FROM tool_calls WHERE source = 'span'),
        (SELECT count(*) FROM thinking WHERE span_id IS NOT NULL),
        (SELECT count(*) FROM flags WHERE code = 'chat_content_not_blocks'),
        (SELECT input_tokens FROM runs), (SELECT output_tokens FROM runs),
        (SELECT round(cost_usd, 6) FROM runs),
        (SELECT max(deliveries) FROM spans)""").fetchone()
    keys = ("spans", "llm_calls", "messages", "tool_calls", "thinking", "findings",
            "input_tokens", "output_tokens", "cost_usd", "deliveries")
    return dict(zip(keys, one, strict=True))


ONCE = {"spans": 2, "llm_calls": 1, "messages": 4, "tool_calls": 1, "thinking": 1,
        "findings": 1, "input_tokens": 100_000, "output_tokens": 50_000, "cost_usd": 0.75}


def test_a_span_read_twice_in_memory_counts_once(write_lines: Callable[..., Path],
                                                 views: MemoryViews) -> None:
    """The same spans twice in one file (a retried request's two lines) and a third time in
    another file: every view counts each span once, and says it was delivered three times."""
    spans, responses = _night(write_lines)
    a = write_lines([{"spans": spans}, {"spans": spans}], name="a.spans.jsonl")
    b = write_lines([{"spans": spans[::-1]}], name="b.spans.jsonl")
    views.load(responses, a, b)
    assert views("SELECT span_id, source_file LIKE '%b.spans.jsonl', deliveries FROM spans "
                 "ORDER BY 1") == [("call", True, 3), ("root", True, 3)]
    assert views("SELECT count(*), sum(input_tokens) FROM llm_calls") == [(1, 100_000)]
    assert views("SELECT input_tokens, output_tokens, tokens_source FROM runs") == [
        (100_000, 50_000, "spans")]


@pytest.mark.parametrize("together", [True, False], ids=["one ingest", "two ingests"])
def test_a_span_in_two_files_counts_once_in_the_lake(write_lines: Callable[..., Path],
                                                     tmp_path: Path, together: bool) -> None:
    """The second file holds the same spans again (in another order: not the same file
    renamed): read with the first, or by a later ingest
    (the derive of that night finds the copies of the days before). Tokens, cost, messages
    and findings count once; the spans say they came twice."""
    spans, responses = _night(write_lines)
    a = write_lines([{"spans": spans}], name="a.spans.jsonl")
    home = tmp_path / "home"
    if together:
        b = write_lines([{"spans": spans[::-1]}], name="b.spans.jsonl")
        ingest([responses, a, b], home)
    else:
        ingest([responses, a], home)
        b = write_lines([{"spans": spans[::-1]}], name="b.spans.jsonl")
        ingest([b], home)
    con = warehouse.connect(home)
    try:
        assert _counts(con) == {**ONCE, "deliveries": 2}
        assert con.execute("SELECT DISTINCT source_file FROM llm_calls").fetchall() == [
            (str(b.resolve()),)]
    finally:
        con.close()


def test_a_request_sent_twice_to_the_receiver_counts_once(tmp_path: Path) -> None:
    """An exporter that did not get the 200 sends the request again: the receiver writes it
    twice (it cannot tell a retry from new spans), and the ingest keeps each span once and
    counts the repeats in its summary."""
    landing, home = tmp_path / "landing", tmp_path / "home"
    chat = json_span("5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174",
                     **{"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                        "gen_ai.usage.input_tokens": 100_000,
                        "gen_ai.usage.output_tokens": 50_000})
    body = json_request([chat])
    served = Served(landing)
    try:
        for _ in range(2):
            status, _answer, _h = post(served.url, body, otlp.JSON)
            assert status == 200
    finally:
        served.stop()
    done = subprocess.run([str(RUNLAKE), "ingest", str(landing), "--home", str(home)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    said = "1 span delivered more than once: 1 copy left out (the copy read last is kept"
    assert said in done.stdout, done.stdout
    con = warehouse.connect(home)
    try:
        assert con.execute("SELECT count(*), sum(input_tokens), sum(output_tokens), "
                           "round(sum(price), 6) FROM llm_calls").fetchall() == [
            (1, 100_000, 50_000, 0.75)]
        assert con.execute("SELECT count(*), max(deliveries) FROM spans").fetchall() == [(1, 2)]
    finally:
        con.close()


def test_a_span_twice_in_one_line_counts_once(write_lines: Callable[..., Path],
                                              views: MemoryViews) -> None:
    """A bulk line (or one OTLP request) that holds a span twice: one span shown, said to
    have come twice, and its LLM call, messages and findings read from the later copy only."""
    call = llm("gpt-4o", 100, 50)
    call["input"]["messages"].append({"role": "user", "content": "a plain string"})
    s = span("call", trace_id="t1", attrs={"run_id": "r1"}, log_request=call)
    views.load(write_lines([run("r1", "t1")], name="a.responses.jsonl"),
               write_lines([{"spans": [s, s]}], name="a.spans.jsonl"))
    assert views("SELECT span_id, deliveries FROM spans") == [("call", 2)]
    assert views("SELECT count(*), sum(input_tokens) FROM llm_calls") == [(1, 100)]
    assert views("SELECT input_tokens FROM runs") == [(100,)]
    assert views("SELECT count(*) FROM messages WHERE source = 'span'") == [(4,)]
    assert views("SELECT count(*) FROM flags WHERE code = 'chat_content_not_blocks'") == [(1,)]


def test_a_span_id_two_traces_share_in_one_line(write_lines: Callable[..., Path],
                                                views: MemoryViews) -> None:
    """One line holds span "s" of trace A and span "s" of trace B; trace A's span comes again
    in a later line. Trace A's LLM call is the later line's, trace B's is its own: each run
    counts its own tokens once."""
    a = span("s", trace_id="tA", attrs={"run_id": "rA"}, log_request=llm("gpt-4o", 100, 50))
    b = span("s", trace_id="tB", attrs={"run_id": "rB"}, log_request=llm("gpt-4o", 7, 3))
    views.load(write_lines([run("rA", "tA"), run("rB", "tB")], name="a.responses.jsonl"),
               write_lines([{"spans": [a, b]}, {"spans": [a]}], name="a.spans.jsonl"))
    assert views("SELECT trace_id, source_line, deliveries FROM spans ORDER BY 1") == [
        ("tA", 2, 2), ("tB", 1, 1)]
    assert views("SELECT trace_id, source_line, input_tokens FROM llm_calls ORDER BY 1") == [
        ("tA", 2, 100), ("tB", 1, 7)]
    assert views("SELECT run_id, input_tokens FROM runs ORDER BY 1") == [("rA", 100), ("rB", 7)]
