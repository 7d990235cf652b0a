"""`agentops`: an AgentOps trace export `{trace, spans}`, written as OTLP span JSONL.

Each span becomes an OTLP span: ids, parent, name, kind, ISO times, status, and its nested
`span_attributes` flattened to dotted OTel keys (`gen_ai.usage.prompt_tokens`,
`gen_ai.prompt`, ...); a span inherits `gen_ai.agent.name` from the nearest agent span above
it (the agent's `role`).
"""

from pathlib import Path
from typing import Any

from transforms.importers import FORMATS
from transforms.importers.common import Importer, Lines, unix_ns


def matches(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("trace"), dict) and isinstance(
        doc.get("spans"), list) and all(isinstance(x, dict) and "span_attributes" in x
                                        for x in doc["spans"])


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested attribute objects as OTel's dotted keys; lists and scalars stay values."""
    if not isinstance(value, dict):
        return {prefix: value} if prefix else {}
    out: dict[str, Any] = {}
    for k, v in value.items():
        out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    return out


_KINDS = {"internal": "SPAN_KIND_INTERNAL", "server": "SPAN_KIND_SERVER",
          "client": "SPAN_KIND_CLIENT", "producer": "SPAN_KIND_PRODUCER",
          "consumer": "SPAN_KIND_CONSUMER"}
_STATUS = {"OK": "STATUS_CODE_OK", "ERROR": "STATUS_CODE_ERROR", "UNSET": "STATUS_CODE_UNSET"}


def convert(src: Path, doc: Any, agent: str | None, model: str | None
            ) -> tuple[Lines, list[str]]:
    trace_id = doc["trace"].get("trace_id")
    flat = [_flatten(s.get("span_attributes")) for s in doc["spans"]]
    by_id = {s.get("span_id"): i for i, s in enumerate(doc["spans"])}

    def agent_of(i: int | None) -> str | None:
        seen: set[int] = set()
        while i is not None and i not in seen:  # up the tree to the nearest agent span
            seen.add(i)
            role = flat[i].get("agent.role")
            if isinstance(role, str) and role:
                return role
            i = by_id.get(doc["spans"][i].get("parent_span_id"))
        return None

    lines = []
    for i, s in enumerate(doc["spans"]):
        attrs = dict(flat[i])
        if isinstance(s.get("attributes"), dict):
            attrs.update(_flatten(s["attributes"]))
        name = agent or agent_of(i)
        if name:
            attrs["gen_ai.agent.name"] = name
        status = {"code": _STATUS.get(str(s.get("status_code")).upper(),
                                      "STATUS_CODE_UNSET")}
        if s.get("status_message"):
            status["message"] = s["status_message"]
        lines.append({
            "traceId": trace_id, "spanId": s.get("span_id"),
            **({"parentSpanId": s["parent_span_id"]} if s.get("parent_span_id") else {}),
            "name": s.get("span_name"),
            "kind": _KINDS.get(str(s.get("span_kind")).lower(), "SPAN_KIND_INTERNAL"),
            "startTimeUnixNano": unix_ns(s.get("start_time")),
            "endTimeUnixNano": unix_ns(s.get("end_time")), "status": status, "attributes": attrs,
            "resource": {"attributes": _flatten(s.get("resource_attributes"))}})
    notes = ["no pass/fail and no run record in an AgentOps export: its spans land as spans "
             "(and LLM calls where they carry a model and tokens)"]
    return lines, notes


IMPORTER = Importer(
    name="agentops",
    describe=FORMATS["agentops"],
    matches=matches, convert=convert, kind="otlp")
