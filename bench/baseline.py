"""The benchmark's baseline: a plain single-process normalizer of the same tables.

It builds runs, messages, tool_calls, thinking and metadata_kv with their main columns (text,
chars, part types, canonical arguments, shapes), the way a straightforward script would.

orjson per line -> Python column lists -> pyarrow -> Parquet (zstd), in batches of ~64 MB of
input. It does what any straightforward script would: no quarantine, no flags, no dedup, no
day partitions, no atomic commit. runlake must be at least as fast while doing all of that.

    python bench/baseline.py INPUT.responses.jsonl OUT_DIR
    python bench/baseline.py --spans INPUT.spans.jsonl OUT_DIR
    python bench/baseline.py --otlp INPUT.otlp.jsonl OUT_DIR
"""

import sys
from collections.abc import Callable
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

BATCH_BYTES = 64 * 1024 * 1024


def _int(v: object) -> int | None:
    return v if isinstance(v, int) else None


def _flush(cols: dict[str, dict[str, list]], writers: dict[str, pq.ParquetWriter],
           out: Path) -> None:
    for name, table_cols in cols.items():
        if not next(iter(table_cols.values())):
            continue
        table = pa.table(table_cols)
        if name not in writers:
            writers[name] = pq.ParquetWriter(out / f"{name}.parquet", table.schema,
                                             compression="zstd")
        writers[name].write_table(table.cast(writers[name].schema))
        for v in table_cols.values():
            v.clear()


def _run(src: Path, out: Path, cols: dict[str, dict[str, list]],
         handle: Callable[[dict], None]) -> None:
    """Parse each line, let `handle` append its rows, write a batch every BATCH_BYTES."""
    out.mkdir(parents=True, exist_ok=True)
    writers: dict[str, pq.ParquetWriter] = {}
    pending = 0
    with open(src, "rb") as f:
        for line in f:
            pending += len(line)
            try:
                obj = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            handle(obj)
            if pending >= BATCH_BYTES:
                _flush(cols, writers, out)
                pending = 0
    _flush(cols, writers, out)
    for w in writers.values():
        w.close()


def main(src: Path, out: Path) -> None:
    cols: dict[str, dict[str, list]] = {
        "runs": {k: [] for k in ("run_id", "agent", "model", "status", "final_response",
                                 "input_tokens", "output_tokens", "agent_runtime_ms",
                                 "n_messages")},
        "messages": {k: [] for k in ("run_id", "message_index", "role", "content_kind", "text",
                                     "chars", "part_types", "tool_call_id", "name")},
        "tool_calls": {k: [] for k in ("run_id", "message_index", "call_index", "call_id",
                                       "tool_name", "arguments", "call_shape")},
        "thinking": {k: [] for k in ("run_id", "message_index", "block_index", "text",
                                     "chars")},
        "metadata_kv": {k: [] for k in ("run_id", "key", "value")},
    }
    r, m, t, th, kv = (cols[k] for k in ("runs", "messages", "tool_calls", "thinking",
                                         "metadata_kv"))

    def handle(obj: dict) -> None:
        rid = obj.get("run_id")
        resp = obj.get("response") or {}
        md = resp.get("metadata") or {}
        msgs = resp.get("messages") or []
        r["run_id"].append(rid)
        r["agent"].append(obj.get("agent"))
        r["model"].append(md.get("model"))
        r["status"].append((obj.get("outcome") or {}).get("status"))
        r["final_response"].append(resp.get("final_response"))
        r["input_tokens"].append(_int(md.get("total_input_tokens")))
        r["output_tokens"].append(_int(md.get("total_output_tokens")))
        r["agent_runtime_ms"].append(md.get("agent_runtime_ms"))
        r["n_messages"].append(len(msgs))
        for i, msg in enumerate(msgs):
            content = msg.get("content")
            kind, types = "string", None
            if isinstance(content, list):
                kind, types = "parts", [p.get("type") for p in content]
                content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
            elif content is None:
                kind = "null"
            m["run_id"].append(rid)
            m["message_index"].append(i)
            m["role"].append(msg.get("role"))
            m["content_kind"].append(kind)
            m["text"].append(content)
            m["chars"].append(len(content) if content is not None else None)
            m["part_types"].append(types)
            m["tool_call_id"].append(msg.get("tool_call_id"))
            m["name"].append(msg.get("name"))
            for ci, tc in enumerate(msg.get("tool_calls") or []):
                fn = tc.get("function") or tc
                args = fn.get("arguments")
                if isinstance(args, str):
                    try:
                        args = orjson.loads(args)
                    except orjson.JSONDecodeError:
                        args = None
                t["run_id"].append(rid)
                t["message_index"].append(i)
                t["call_index"].append(ci)
                t["call_id"].append(tc.get("id"))
                t["tool_name"].append(fn.get("name"))
                t["arguments"].append(orjson.dumps(args, option=orjson.OPT_SORT_KEYS).decode())
                t["call_shape"].append("nested" if "function" in tc else "flat")
            for bi, block in enumerate(msg.get("thinking") or []):
                th["run_id"].append(rid)
                th["message_index"].append(i)
                th["block_index"].append(bi)
                th["text"].append(block.get("text"))
                th["chars"].append(len(block.get("text") or ""))
        for k, v in md.items():
            kv["run_id"].append(rid)
            kv["key"].append(k)
            kv["value"].append(orjson.dumps(v).decode())

    _run(src, out, cols, handle)


def main_spans(src: Path, out: Path) -> None:
    """The same plain approach for span JSONL: spans, llm_calls and the calls' messages."""
    cols: dict[str, dict[str, list]] = {
        "spans": {k: [] for k in ("trace_id", "span_id", "parent_id", "name", "start_ns",
                                  "end_ns", "duration_ms", "attributes")},
        "llm_calls": {k: [] for k in ("span_id", "provider", "model", "input_tokens",
                                      "output_tokens", "price", "status")},
        "messages": {k: [] for k in ("span_id", "message_index", "role", "text")},
    }
    sp, lc, m = cols["spans"], cols["llm_calls"], cols["messages"]

    def handle(obj: dict) -> None:
        for s in obj.get("spans") or [obj]:
            ctx = s.get("context") or {}
            sid = ctx.get("span_id")
            sp["trace_id"].append(ctx.get("trace_id"))
            sp["span_id"].append(sid)
            sp["parent_id"].append(s.get("parent_id"))
            sp["name"].append(s.get("name"))
            sp["start_ns"].append(s.get("start_time"))
            sp["end_ns"].append(s.get("end_time"))
            sp["duration_ms"].append((s["end_time"] - s["start_time"]) / 1e6)
            sp["attributes"].append(orjson.dumps(s.get("attributes")).decode())
            lr = s.get("log_request")
            if not lr:
                continue
            for k in ("provider", "model", "input_tokens", "output_tokens", "price",
                      "status"):
                lc[k].append(lr.get(k))
            lc["span_id"].append(sid)
            msgs = (lr.get("input") or {}).get("messages", []) + \
                (lr.get("output") or {}).get("messages", [])
            for i, msg in enumerate(msgs):
                m["span_id"].append(sid)
                m["message_index"].append(i)
                m["role"].append(msg.get("role"))
                m["text"].append("".join(b.get("text", "") for b in msg.get("content") or []
                                         if isinstance(b, dict)))

    _run(src, out, cols, handle)


def _attr(v: dict) -> object:
    for k in ("stringValue", "boolValue", "doubleValue"):
        if k in v:
            return v[k]
    if "intValue" in v:
        return int(v["intValue"])
    if "arrayValue" in v:
        return [_attr(x) for x in v["arrayValue"].get("values", [])]
    return None


def main_otlp(src: Path, out: Path) -> None:
    """The same plain approach for OTLP/JSON collector records in the GenAI conventions:
    attributes flattened, the chat spans' usage and their input/output messages (JSON strings
    of parts) parsed."""
    cols: dict[str, dict[str, list]] = {
        "spans": {k: [] for k in ("trace_id", "span_id", "parent_id", "name", "start_ns",
                                  "end_ns", "duration_ms", "attributes")},
        "llm_calls": {k: [] for k in ("span_id", "provider", "model", "input_tokens",
                                      "output_tokens")},
        "messages": {k: [] for k in ("span_id", "message_index", "role", "text")},
    }
    sp, lc, m = cols["spans"], cols["llm_calls"], cols["messages"]

    def handle(obj: dict) -> None:
        for rs in obj.get("resourceSpans") or []:
            for ss in rs.get("scopeSpans") or []:
                for s in ss.get("spans") or []:
                    a = {kv["key"]: _attr(kv["value"]) for kv in s.get("attributes") or []}
                    sid = s.get("spanId")
                    start, end = int(s["startTimeUnixNano"]), int(s["endTimeUnixNano"])
                    sp["trace_id"].append(s.get("traceId"))
                    sp["span_id"].append(sid)
                    sp["parent_id"].append(s.get("parentSpanId"))
                    sp["name"].append(s.get("name"))
                    sp["start_ns"].append(start)
                    sp["end_ns"].append(end)
                    sp["duration_ms"].append((end - start) / 1e6)
                    sp["attributes"].append(orjson.dumps(a).decode())
                    if a.get("gen_ai.operation.name") != "chat":
                        continue
                    lc["span_id"].append(sid)
                    lc["provider"].append(a.get("gen_ai.provider.name"))
                    lc["model"].append(a.get("gen_ai.request.model"))
                    lc["input_tokens"].append(a.get("gen_ai.usage.input_tokens"))
                    lc["output_tokens"].append(a.get("gen_ai.usage.output_tokens"))
                    msgs = orjson.loads(a.get("gen_ai.input.messages") or "[]") + \
                        orjson.loads(a.get("gen_ai.output.messages") or "[]")
                    for i, msg in enumerate(msgs):
                        m["span_id"].append(sid)
                        m["message_index"].append(i)
                        m["role"].append(msg.get("role"))
                        m["text"].append("".join(p.get("content", "") for p in
                                                 msg.get("parts") or []
                                                 if p.get("type") == "text"))

    _run(src, out, cols, handle)


if __name__ == "__main__":
    if sys.argv[1] == "--spans":
        main_spans(Path(sys.argv[2]), Path(sys.argv[3]))
    elif sys.argv[1] == "--otlp":
        main_otlp(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        main(Path(sys.argv[1]), Path(sys.argv[2]))
