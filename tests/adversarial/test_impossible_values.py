"""Values no run or call can have: a negative, NaN, infinite or absurd price on a span's LLM
call, a runtime of 1e300 ms, a root span that ends before it starts. Each is left out of the
figures (null, never a negative cost or a percentile of 1e300) and raises a finding."""

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import MemoryViews

START = 1795219200000000000  # 2026-11-21T00:00:00Z in Unix nanoseconds


def _span(run_id: str, span_id: str, *, price: Any = None, start: int = START,
          end: int = START + 1_500_000_000, root: bool = False) -> dict[str, Any]:
    span: dict[str, Any] = {
        "name": "agent" if root else "llm_call",
        "context": {"trace_id": f"t-{run_id}", "span_id": span_id, "trace_state": ""},
        "kind": "SpanKind.INTERNAL" if root else "SpanKind.CLIENT",
        "parent_id": None if root else f"{run_id}-root",
        "start_time": start, "end_time": end,
        "status": {"status_code": "StatusCode.OK"},
        "attributes": {"run_id": run_id},
        "resource": {"attributes": {"service.name": "a"}, "schema_url": ""},
    }
    if not root:
        span["log_request"] = {"provider": "openai", "model": "gpt-4o", "input_tokens": 100,
                               "output_tokens": 10, "price": price}
    return span


def _raw_span(span: dict[str, Any], price_text: str) -> str:
    """The span as JSON text with its price written as given (NaN, Infinity, 1e999)."""
    return json.dumps(span).replace('"price": null', f'"price": {price_text}')


def test_impossible_call_prices_are_left_out_and_flagged(
        write_lines: Callable[..., Path], views: MemoryViews) -> None:
    runs = [{"run_id": r, "agent": "a", "started_at": "2026-11-21T00:00:00Z",
             "outcome": {"status": "passed"}, "response": {"final_response": "ok"}}
            for r in ("neg", "nan-text", "nan", "inf", "huge", "fine")]
    spans = [
        _span("neg", "s1", price=-3.0), _span("nan-text", "s2", price="NaN"),
        _raw_span(_span("nan", "s3"), "NaN"), _raw_span(_span("inf", "s4"), "Infinity"),
        _span("huge", "s5", price=1e300), _span("fine", "s6", price=0.25),
    ]
    views.load(write_lines(runs), write_lines(spans, name="b.spans.jsonl"))
    # A price left out is the price table's (100 input and 10 output tokens of gpt-4o).
    prices = {s: (p, source) for s, p, source in views(
        "select span_id, price, price_source from llm_calls")}
    table = (100 * 2.50 + 10 * 10.00) / 1e6
    assert prices == {"s1": (table, "table"), "s2": (table, "table"),
                      "s5": (table, "table"), "s6": (0.25, "source")}
    found = dict(views("select span_id, detail from flags where code = 'span_malformed'"))
    for span_id, shown in (("s1", "-3.0"), ("s2", '"NaN"'), ("s5", "1e+300")):
        assert f"log_request.price {shown} is not a price" in found[span_id], found
    # NaN and Infinity are not JSON: those lines are quarantined with their reason, not read.
    assert {"s3", "s4"}.isdisjoint(found)
    assert views("select count(*) from quarantine") == [(2,)]
    costs = dict(views("select run_id, cost_usd from runs"))
    assert costs["fine"] == 0.25 and costs["neg"] == table
    assert all(c is None or (c >= 0 and math.isfinite(c)) for c in costs.values()), costs


def test_an_impossible_runtime_is_nulled_and_flagged(
        write_lines: Callable[..., Path], views: MemoryViews) -> None:
    lines = [{"run_id": f"r{i}", "agent": "a", "started_at": "2026-11-21T00:00:00Z",
              "response": {"final_response": "ok", "metadata": {"agent_runtime_ms": ms}}}
             for i, ms in enumerate([1e300, 2_678_400_001, 2_678_400_000, 5000])]
    views.load(write_lines(lines))
    got = dict(views("select run_id, agent_runtime_ms from runs"))
    assert got == {"r0": None, "r1": None, "r2": 2_678_400_000, "r3": 5000}
    flagged = dict(views("select run_id, detail from flags where code = 'metadata_malformed'"))
    assert set(flagged) == {"r0", "r1"}
    assert "an impossible runtime" in flagged["r0"]
    p95 = views("select agent_runtime_ms_max from v_runtime")[0][0]
    assert p95 == 2_678_400_000


def test_a_root_span_that_ends_before_it_starts_gives_no_runtime(
        write_lines: Callable[..., Path], views: MemoryViews) -> None:
    runs = [{"run_id": r, "agent": "a", "trace_id": f"t-{r}",
             "started_at": "2026-11-21T00:00:00Z", "response": {"final_response": "ok"}}
            for r in ("back", "ok")]
    spans = [_span("back", "back-root", root=True, end=START - 5_000_000_000),
             _span("ok", "ok-root", root=True, end=START + 2_000_000_000)]
    views.load(write_lines(runs), write_lines(spans, name="b.spans.jsonl"))
    got = dict(views("select run_id, agent_runtime_ms from runs"))
    assert got == {"back": None, "ok": 2000}
    assert views("select count(*) from flags where code = 'span_end_before_start' "
                 "and span_id = 'back-root'") == [(1,)]
