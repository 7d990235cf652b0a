"""Durable agent entity state documents (docs/formats.md) as runs.

One document is one run: `data.conversationHistory` entries (requests and responses) are
flattened in order into the run's transcript. Contents by `$type`: text -> message text,
reasoning -> a thinking row, functionCall -> a tool call (arguments as given), functionResult
-> a tool message answering its callId, usage -> token counts, error -> the run's error (status
`error`); data, uri, hostedFile, hostedVectorStore and unknown contents are kept as other parts.
Response-level `usage` adds to the tokens. The document is translated into the response
envelope and read by the response normalizer, so it gets the same tables, links and flags.
"""

import hashlib
import re
from datetime import date
from typing import Any

from transforms.contracts.registry import Registry
from transforms.normalize.columns import INT64_MAX, ColumnBuffers
from transforms.normalize.responses import ResponseNormalizer
from transforms.read import jsontext
from transforms.read.readers import describe

SCHEMA_VERSION = re.compile(r"^\d+\.\d+\.\d+$")
NOT_DURABLE = ("a JSON object without data.conversationHistory (a list), so not a durable agent "
               "state document")
# Top-level keys a team may add around the state to name the run (kept when present).
PASSTHROUGH = ("run_id", "agent", "agent_id", "agent_version", "test_case_id", "batch_id",
               "trace_id", "session_id", "outcome", "passed", "response_contract")


def _text(value: Any, where: str = "", problems: list[str] | None = None) -> str:
    """A content's text: a string as it is, anything else as JSON text (one nested too deep
    is named in `problems`)."""
    if isinstance(value, str):
        return value
    text, too_deep = jsontext.text(value)
    if too_deep and problems is not None:
        problems.append(f"{where} is nested more than {jsontext.MAX_DEPTH} levels deep (kept "
                        "whole as JSON text)")
    return text


class DurableNormalizer:
    """Appends the rows of durable state documents of one source file to column buffers."""

    def __init__(self, source_file: str, fallback_day: date, buffers: ColumnBuffers) -> None:
        self.responses = ResponseNormalizer(source_file, fallback_day, buffers)
        self.days = self.responses.days

    def use_registry(self, registry: Registry | None) -> None:
        self.responses.use_registry(registry)

    def add(self, line: int, raw: bytes, obj: dict[str, Any]) -> str | None:
        data = obj.get("data")
        history = data.get("conversationHistory") if isinstance(data, dict) else None
        if not isinstance(history, list):
            return NOT_DURABLE
        problems: list[str] = []
        messages: list[dict[str, Any]] = []
        errors: list[str] = []
        tokens_in = tokens_out = 0
        has_usage = False
        stamps: list[str] = []
        author: str | None = None

        def usage(u: Any, where: str) -> None:
            nonlocal tokens_in, tokens_out, has_usage
            if not isinstance(u, dict):
                problems.append(f"{where} usage is {describe(u)}")
                return
            i, o = u.get("inputTokenCount"), u.get("outputTokenCount")
            for key, v in (("inputTokenCount", i), ("outputTokenCount", o)):
                if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                    problems.append(f"{where} usage.{key} is {describe(v)}, not a token count")
                    return
                if v is not None and abs(v) > INT64_MAX:
                    problems.append(f"{where} usage.{key} {str(v)[:40]} is out of the 64-bit "
                                    "range")
                    return
            has_usage = has_usage or i is not None or o is not None
            tokens_in += i or 0
            tokens_out += o or 0

        for ei, entry in enumerate(history):
            if not isinstance(entry, dict):
                problems.append(f"conversationHistory[{ei}] is {describe(entry)}")
                continue
            if isinstance(entry.get("createdAt"), str):
                stamps.append(entry["createdAt"])
            if "usage" in entry:
                usage(entry["usage"], f"conversationHistory[{ei}]")
            msgs = entry.get("messages")
            if not isinstance(msgs, list):
                problems.append(f"conversationHistory[{ei}].messages is {describe(msgs)}")
                continue
            for mi, m in enumerate(msgs):
                where = f"conversationHistory[{ei}].messages[{mi}]"
                if not isinstance(m, dict):
                    problems.append(f"{where} is {describe(m)}")
                    continue
                role = m.get("role")
                name = m.get("authorName") if isinstance(m.get("authorName"), str) else None
                if author is None and role == "assistant" and name:
                    author = name
                parts: list[dict[str, Any]] = []
                calls: list[dict[str, Any]] = []
                results: list[dict[str, Any]] = []
                contents = m.get("contents")
                if not isinstance(contents, list):
                    problems.append(f"{where}.contents is {describe(contents)}")
                    contents = []
                for c in contents:
                    t = c.get("$type") if isinstance(c, dict) else None
                    if t == "text" and isinstance(c.get("text"), str):
                        parts.append({"type": "text", "text": c["text"]})
                    elif t == "reasoning":
                        parts.append({"type": "thinking", "thinking": _text(
                            c.get("text", ""), f"{where} reasoning", problems)})
                    elif t == "functionCall":
                        calls.append({"id": c.get("callId"), "name": c.get("name"),
                                      "arguments": c.get("arguments")})
                    elif t == "functionResult":
                        results.append({"role": "tool", "tool_call_id": c.get("callId"),
                                        "content": _text(c.get("result"), f"{where} result",
                                                         problems)})
                    elif t == "usage":
                        usage(c.get("usage"), where)
                    elif t == "error":
                        errors.append(_text(c.get("message") or c.get("errorCode") or "error",
                                            f"{where} error", problems))
                        parts.append({"type": "error", **{k: v for k, v in c.items()
                                                          if k != "$type"}})
                    elif isinstance(c, dict):
                        parts.append({"type": t if isinstance(t, str) else "untyped",
                                      **{k: v for k, v in c.items() if k != "$type"}})
                    else:
                        problems.append(f"{where} content is {describe(c)}")
                if role == "tool" and results and not parts and not calls:
                    # The usual shape: a tool message carrying one or more results.
                    for r in results:
                        messages.append({**r, **({"name": name} if name else {})})
                    continue
                msg: dict[str, Any] = {"role": role, "content": parts or None}
                if name:
                    msg["name"] = name
                if calls:
                    msg["tool_calls"] = calls
                messages.append(msg)
                messages.extend(results)

        final = next((p["text"] for m in reversed(messages) if m.get("role") == "assistant"
                      for p in reversed(m.get("content") or []) if p.get("type") == "text"),
                     None)
        env: dict[str, Any] = {k: obj[k] for k in PASSTHROUGH if k in obj}
        env.setdefault("run_id", "durable-" + hashlib.blake2b(raw, digest_size=10).hexdigest())
        if author and "agent" not in env and "agent_id" not in env:
            env["agent"] = author
        if stamps:
            env["started_at"], env["ended_at"] = stamps[0], stamps[-1]
        if errors and "outcome" not in env and "passed" not in env:
            env["outcome"] = {"status": "error", "error": errors[0]}
        metadata: dict[str, Any] = {}
        if has_usage:
            metadata = {"total_input_tokens": tokens_in, "total_output_tokens": tokens_out}
        env["response"] = {"final_response": final, "messages": messages,
                           **({"metadata": metadata} if metadata else {})}
        extra: list[tuple[str, str]] = []
        version = obj.get("schemaVersion")
        if not isinstance(version, str) or not SCHEMA_VERSION.match(version):
            extra.append(("schema_version_invalid",
                          "schemaVersion is missing" if version is None else
                          f"schemaVersion {_text(version)[:40]!r} is not N.N.N"))
        if problems:
            shown = "; ".join(problems[:3]) + ("; ..." if len(problems) > 3 else "")
            extra.append(("envelope_malformed",
                          f"{len(problems)} malformed parts of the state: {shown}"))
        return self.responses.add(line, raw, env, shape="durable", extra_flags=extra)
