"""Hostile records: a valid record of each kind with one part replaced by any JSON value.
Every reader must account for the line (rows or a quarantine row) and never raise."""

import json
from datetime import date
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from devtools.synth import make_spans, runs
from devtools.synth_otlp import to_otlp
from tests.property import examples
from transforms.contracts.registry import Registry, load
from transforms.contracts.schemas import TABLES
from transforms.normalize.worker import BlockTask, normalize_block
from transforms.read.readers import BlockReader, InputFile

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70)
    | st.sampled_from([2**63, 2**64 - 1, -2**63]) | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=8)


def _bases() -> dict[str, list[Any]]:
    import random

    (_, _, run), *_ = runs(seed=1, days=[date(2026, 11, 20)], per_agent_per_day=1)
    spans = make_spans(random.Random(1), run)
    durable = {"schemaVersion": "1.0.0", "data": {"conversationHistory": [
        {"$type": "request", "correlationId": "c1", "createdAt": "2026-11-20T01:00:00Z",
         "messages": [{"role": "user", "contents": [{"$type": "text", "text": "hi"}]}]},
        {"$type": "response", "correlationId": "c1", "createdAt": "2026-11-20T01:00:02Z",
         "usage": {"inputTokenCount": 5, "outputTokenCount": 2},
         "messages": [{"role": "assistant", "authorName": "bot", "contents": [
             {"$type": "functionCall", "callId": "k", "name": "f", "arguments": {"a": 1}},
             {"$type": "reasoning", "text": "so"}]},
             {"role": "tool", "contents": [{"$type": "functionResult", "callId": "k",
                                            "result": "ok"}]}]}]}}
    return {"responses": [run], "spans": [{"spans": spans}, spans[-1]],
            "otlp": [to_otlp(spans), to_otlp(spans)["resourceSpans"][0]["scopeSpans"][0][
                "spans"][-1]], "durable": [durable]}


BASES = _bases()


def _registry(tmp: Path) -> Registry:
    """Every tool the base run calls, registered for every agent (the first one strict), so
    hostile arguments meet the schema checks too."""
    (run,) = BASES["responses"]
    names = sorted({(c.get("function") or c)["name"] for m in run["response"]["messages"]
                    for c in m.get("tool_calls") or []})
    tools = [{"type": "function", "function": {
        "name": n, "strict": i == 0, "parameters": {
            "type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"],
            "additionalProperties": False}}} for i, n in enumerate(names)]
    path = tmp / "tools.json"
    path.write_text(json.dumps({"*": tools}))
    return load(path)


@st.composite
def hostile(draw: st.DrawFn) -> tuple[str, Any]:
    kind = draw(st.sampled_from(sorted(BASES)))
    obj = json.loads(json.dumps(draw(st.sampled_from(BASES[kind]))))
    for _ in range(draw(st.integers(1, 3))):  # up to three parts replaced
        node = obj
        for _ in range(12):
            keys = list(node) if isinstance(node, dict) else list(range(len(node))) \
                if isinstance(node, list) else []
            if not keys:
                break
            key = draw(st.sampled_from(keys))
            if draw(st.integers(0, 3)) == 0 or not isinstance(node[key], dict | list):
                node[key] = draw(json_values)
                break
            node = node[key]
    return kind, obj


@settings(max_examples=examples(400), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=hostile())
def test_a_hostile_record_is_accounted_for(tmp_path: Path, case: tuple[str, Any]) -> None:
    kind, obj = case
    data = json.dumps(obj).encode() + b"\n"
    name = f"h.{kind}.json" if kind == "durable" else f"h.{kind}.jsonl"
    path = tmp_path / name
    path.write_bytes(data)
    f = InputFile(path, name, kind, "none", len(data))
    (block,) = BlockReader(f)
    registry = _registry(tmp_path) if kind in ("responses", "durable") else None
    res, buffers = normalize_block(BlockTask(block, name, kind, date(2026, 11, 21), "", "0",
                                             registry))
    assert res.lines == 1 and res.accepted + res.quarantined == 1
    assert buffers.rows("quarantine") == res.quarantined
    # No reader tripped (the worker's safety net is for bugs, not for inputs like these)...
    assert not [m for m in buffers.column("quarantine", "error_message")
                if m.startswith("runlake could not read")]
    # ...and every row fits its Arrow column.
    for table in TABLES:
        buffers.to_arrow(table)


def test_a_reader_that_trips_quarantines_the_line_and_takes_its_rows_back(
        tmp_path: Path, monkeypatch: Any) -> None:
    """Should a reader ever raise on a record, the line lands in the quarantine with the
    error named, the rows it had begun are removed, and the other lines are read."""
    from transforms.normalize.responses import ResponseNormalizer

    add = ResponseNormalizer.add

    def tripping(self: ResponseNormalizer, line: int, raw: bytes, obj: Any, **kw: Any) -> Any:
        result = add(self, line, raw, obj, **kw)  # its rows are written...
        if obj.get("run_id") == "boom":
            raise KeyError("a reader bug")  # ...then it trips
        return result

    monkeypatch.setattr(ResponseNormalizer, "add", tripping)
    (run,) = BASES["responses"]
    lines = [{**run, "run_id": "ok-1"}, {**run, "run_id": "boom"}, {**run, "run_id": "ok-2"}]
    data = "".join(json.dumps(x) + "\n" for x in lines).encode()
    path = tmp_path / "t.responses.jsonl"
    path.write_bytes(data)
    f = InputFile(path, path.name, "responses", "none", len(data))
    (block,) = BlockReader(f)
    res, buffers = normalize_block(BlockTask(block, f.source_file, "responses",
                                             date(2026, 11, 21), "", "0"))
    assert (res.lines, res.accepted, res.quarantined) == (3, 2, 1)
    assert buffers.column("runs", "run_id") == ["ok-1", "ok-2"]
    assert "boom" not in buffers.column("messages", "run_id")
    assert buffers.column("messages", "run_id").count("ok-2") == len(run["response"]["messages"])
    (message,) = buffers.column("quarantine", "error_message")
    assert message.startswith("runlake could not read this record (KeyError")
    assert buffers.column("quarantine", "line_number") == [2]
