"""OTLP attribute values and the GenAI and OpenInference message conventions, as plain Python.

`attributes` flattens an OTLP `KeyValue` list (each value an `AnyValue`) into a dict;
`genai_messages` reads `gen_ai.input.messages` / `gen_ai.output.messages` (parts text,
tool_call, tool_call_response, reasoning); `indexed_messages` reads OpenInference's and
OpenLLMetry's flattened `llm.input_messages.N.*` / `gen_ai.prompt.N.*` attributes. The OTLP
normalizer (normalize.otlp) builds its spans from these.
"""

import re
from typing import Any

import orjson

from transforms.normalize.columns import INT64_MAX
from transforms.normalize.span_fields import ALIASES, attr_count
from transforms.read import jsontext


def as_dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def lookup(table: dict[Any, str], v: Any) -> str | None:
    """`table[v]` for a name or number (never a bool or an unhashable value), else None."""
    return table.get(v) if isinstance(v, int | str) and not isinstance(v, bool) else None


def any_value(v: Any) -> Any:
    """An OTLP AnyValue as a plain value."""
    if not isinstance(v, dict):
        return v
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in v:
            return v[key]
    if "intValue" in v:
        raw = v["intValue"]
        try:
            n = int(raw) if isinstance(raw, int | str) and not isinstance(raw, bool) else None
        except ValueError:
            n = None
        # Out of the 64-bit range (or not a number): kept as given, never a crash later.
        return n if n is not None and -INT64_MAX - 1 <= n <= INT64_MAX else raw
    if "arrayValue" in v:
        values = as_dict(v["arrayValue"]).get("values")
        return [any_value(x) for x in values] if isinstance(values, list) else []
    if "kvlistValue" in v:
        return attributes(as_dict(v["kvlistValue"]).get("values"))
    if "bytesValue" in v:
        return v["bytesValue"]
    return None


def attributes(kvs: Any) -> dict[str, Any]:
    if isinstance(kvs, dict):
        return kvs  # already a plain mapping (JS ReadableSpan, hand-made exports)
    out: dict[str, Any] = {}
    for kv in kvs if isinstance(kvs, list) else []:
        if isinstance(kv, dict) and isinstance(kv.get("key"), str):
            out[kv["key"]] = any_value(kv.get("value"))
    return out


def first(attrs: dict[str, Any], field: str) -> Any:
    for key in ALIASES[field]:
        if attrs.get(key) is not None:
            return attrs[key]
    return None


def json_value(v: Any) -> Any:
    if isinstance(v, str):
        try:
            return jsontext.loads(v)
        except orjson.JSONDecodeError:
            return v
    return v


def nanos(v: Any) -> Any:
    """Unix nanoseconds from OTLP's decimal strings or JS HrTime `[s, ns]`; anything else is
    passed on as it is, so the span reader names it (span_malformed)."""
    if isinstance(v, list) and len(v) == 2:
        s, ns = int_value(v[0]), int_value(v[1])
        if s is not None and ns is not None:
            return s * 1_000_000_000 + ns
    n = int_value(v)
    return v if n is None else n


def int_value(v: Any) -> int | None:
    """A non-negative integer that fits a BIGINT, from an int, ASCII decimal digits (OTLP/JSON
    writes 64-bit integers as strings) or a whole double (OTLP doubleValue)."""
    return attr_count(v)


def count_value(v: Any) -> Any:
    """A token count as an int when it is one (numbers as strings too), else the value as
    given, so the span reader flags it rather than dropping it silently."""
    n = int_value(v)
    return v if n is None else n


def genai_messages(raw: Any) -> list[dict[str, Any]] | None:
    """GenAI `{role, parts: [...]}` messages (or OpenAI-style ones) as transcript messages."""
    value = json_value(raw)
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        value = value["messages"]
    if not isinstance(value, list):
        return None
    out: list[dict[str, Any]] = []
    for m in value:
        if not isinstance(m, dict):
            out.append(m)  # kept: the transcript normalizer flags it
            continue
        parts = m.get("parts")
        if not isinstance(parts, list):
            content = m.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            out.append({**m, "content": blocks})
            continue
        blocks, calls, results = [], [], []
        for p in parts:
            t = p.get("type") if isinstance(p, dict) else None
            if t == "text":
                blocks.append({"type": "text", "text": p.get("content") or p.get("text") or ""})
            elif t == "reasoning":
                blocks.append({"type": "thinking", "thinking": p.get("content") or ""})
            elif t == "tool_call":
                calls.append({"id": p.get("id"), "name": p.get("name"),
                              "arguments": p.get("arguments")})
            elif t == "tool_call_response":
                resp = p.get("response", p.get("result"))
                results.append({"role": "tool", "tool_call_id": p.get("id"), "content": [
                    {"type": "text", "text": resp if isinstance(resp, str)
                     else jsontext.dumps(resp)}]})
            elif isinstance(p, dict):
                blocks.append(p)
        if results and not blocks and not calls:
            out.extend(results)
            continue
        msg: dict[str, Any] = {"role": m.get("role"), "content": blocks}
        if calls:
            msg["tool_calls"] = calls
        out.append(msg)
        out.extend(results)
    return out


_FLAT = (re.compile(r"^llm\.(input|output)_messages\.(\d+)\.message\.(.+)$"),  # OpenInference
         re.compile(r"^gen_ai\.(prompt|completion)\.(\d+)\.(.+)$"))  # OpenLLMetry
_DIRECTION = {"input": "input", "output": "output", "prompt": "input", "completion": "output"}
_CALL = re.compile(r"^tool_calls\.(\d+)\.(?:tool_call\.)?(id|name|arguments|function\.name|"
                   r"function\.arguments)$")


def indexed_messages(attrs: dict[str, Any], direction: str) -> list[dict[str, Any]]:
    """Messages flattened into indexed attributes: OpenInference's
    `llm.<direction>_messages.N.message.*` and OpenLLMetry's `gen_ai.prompt.N.*` /
    `gen_ai.completion.N.*` (role, content, tool calls, tool_call_id)."""
    rows: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        for pattern in _FLAT:
            m = pattern.match(key)
            if m and _DIRECTION[m[1]] == direction:
                rows.setdefault(int(m[2]), {})[m[3]] = value
    out = []
    for _, f in sorted(rows.items()):
        blocks = []
        if isinstance(f.get("content"), str):
            blocks.append({"type": "text", "text": f["content"]})
        texts = sorted((k, v) for k, v in f.items()
                       if k.startswith("contents.") and k.endswith("message_content.text"))
        blocks += [{"type": "text", "text": v} for _, v in texts]
        msg: dict[str, Any] = {"role": f.get("role"), "content": blocks}
        calls: dict[int, dict[str, Any]] = {}
        for k, v in f.items():
            cm = _CALL.match(k)
            if cm:
                calls.setdefault(int(cm[1]), {})[cm[2].split(".")[-1]] = v
        if calls:
            msg["tool_calls"] = [{"id": c.get("id"), "name": c.get("name"),
                                  "arguments": c.get("arguments")}
                                 for _, c in sorted(calls.items())]
        if f.get("tool_call_id"):
            msg["tool_call_id"] = f["tool_call_id"]
        out.append(msg)
    return out
