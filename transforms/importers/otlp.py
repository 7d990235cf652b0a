"""`otlp`: OpenTelemetry spans saved as one JSON document.

A collector export `{resourceSpans}`, a JSON array of OTLP spans or OTel JS ReadableSpans
(`spanContext`, `[s, ns]` times), or one span. Written as `*.otlp.jsonl`, one span (or export)
per line, for the OTLP reader (transforms/normalize/otlp.py), which maps the GenAI
conventions.
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from transforms.importers import FORMATS
from transforms.importers.common import Importer, Lines
from transforms.normalize.span_fields import AGENT_KEYS


def _is_span(x: Any) -> bool:
    """An OTLP span (traceId, spanId) or an OTel JS ReadableSpan (spanContext)."""
    return isinstance(x, dict) and (("traceId" in x and "spanId" in x)
                                    or isinstance(x.get("spanContext"), dict))


def matches(doc: Any) -> bool:
    if isinstance(doc, list):
        return bool(doc) and all(_is_span(x) for x in doc)
    return isinstance(doc, dict) and ("resourceSpans" in doc or _is_span(doc))


def convert(src: Path, doc: Any, agent: str | None, model: str | None
            ) -> tuple[Lines, list[str]]:
    lines = doc if isinstance(doc, list) else [doc]
    if agent:
        for line in lines:
            if "resourceSpans" not in line:
                _set_attribute(line, "gen_ai.agent.name", agent, AGENT_KEYS)
                continue
            for rs in _as_list(line["resourceSpans"]):
                if isinstance(rs, dict) and isinstance(rs.setdefault("resource", {}), dict):
                    _set_attribute(rs["resource"], "service.name", agent, ("service.name",))
            for sp in _export_spans(line):
                _set_attribute(sp, "gen_ai.agent.name", agent, AGENT_KEYS)
    notes = ["no pass/fail and no run record in OTLP spans: they land as spans (and LLM "
             "calls), linked to runs only by a run_id attribute or trace id"]
    return lines, notes


def _as_list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _export_spans(line: Any) -> Iterator[dict[str, Any]]:
    """The span objects of an OTLP export record, walked as the reader walks them."""
    for rs in _as_list(line.get("resourceSpans") if isinstance(line, dict) else None):
        scopes = (rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans")) \
            if isinstance(rs, dict) else None
        for ss in _as_list(scopes):
            yield from (sp for sp in _as_list(ss.get("spans") if isinstance(ss, dict) else None)
                        if isinstance(sp, dict))


def _set_attribute(owner: dict[str, Any], key: str, value: str,
                   replaces: tuple[str, ...]) -> None:
    """Set one attribute of a span or resource, dropping the keys it `replaces`, whether its
    attributes are an OTLP KeyValue list or a plain object."""
    attrs = owner.get("attributes")
    if isinstance(attrs, list):
        owner["attributes"] = [a for a in attrs if isinstance(a, dict)
                               and a.get("key") not in replaces] + [
            {"key": key, "value": {"stringValue": value}}]
    else:
        kept = {k: v for k, v in (attrs if isinstance(attrs, dict) else {}).items()
                if k not in replaces}
        owner["attributes"] = {**kept, key: value}


def _n_spans(line: Any) -> int:
    """Spans in a written line, counted as the readers will find them."""
    if not isinstance(line, dict):
        return 0
    if isinstance(line.get("spans"), list):
        return len(line["spans"])
    if "resourceSpans" in line:
        return sum(1 for _ in _export_spans(line))
    return 1


def count(lines: Lines) -> int:
    return sum(_n_spans(line) for line in lines)


IMPORTER = Importer(
    name="otlp",
    describe=FORMATS["otlp"],
    matches=matches, convert=convert, kind="otlp", count=count)
