"""Every importer, and the documents runlake knows but does not import: which format a source
looks like (KNOWN), the importer of each format `runlake import` reads (IMPORTERS), and
`run_import`. This module loads every importer: `runlake import` imports it when it runs, never
for --help (the formats' names and descriptions are the package's, transforms.importers)."""

from pathlib import Path
from typing import Any

from transforms.errors import InputError
from transforms.importers import (
    FORMATS,
    agentops,
    inspect_log,
    langfuse,
    openhands,
    otlp,
    run,
    swe_agent,
    tau2,
    tau_bench,
)
from transforms.importers.common import Importer, ImportResult, Recognized


def _is_durable(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("data"), dict) and \
        "conversationHistory" in doc["data"]


def _is_span_attributes(doc: Any) -> bool:
    return isinstance(doc, dict) and bool(doc) and all(
        isinstance(k, str) and k.startswith(("gen_ai.", "llm.", "ai.", "openinference."))
        for k in doc if "." in k) and any("." in k for k in doc)


DURABLE = Recognized("durable", _is_durable, "it is a durable agent state document: put it "
                     "in the landing folder as *.durable.json, no import needed")
SPAN_ATTRIBUTES = Recognized("span attributes", _is_span_attributes,
                             "it holds one span's attributes without ids or times; runlake "
                             "imports whole spans (traceId, spanId, times)")

KNOWN: run.Known = (
    tau_bench.IMPORTER, tau2.IMPORTER, swe_agent.IMPORTER, inspect_log.IMPORTER,
    otlp.IMPORTER, openhands.IMPORTER, agentops.IMPORTER, DURABLE, SPAN_ATTRIBUTES,
    langfuse.IMPORTER)
"""Every importer, and the documents runlake knows but does not import, in the order
documents are told apart in (a document may have more than one format's outline: the first
that matches names it), for the error naming what a source looks like."""

_BY_NAME = {i.name: i for i in KNOWN if isinstance(i, Importer)}
IMPORTERS: dict[str, Importer] = {name: _BY_NAME[name] for name in FORMATS}
"""The formats `runlake import` reads, by name, in the order --help lists them (FORMATS)."""


def run_import(fmt: str, sources: list[Path], out: Path, agent: str | None = None,
               model: str | None = None) -> list[ImportResult]:
    """Convert every source file of format `fmt`, then write each one's
    `out/<name>.<kind>.jsonl`: all of them, or none when a source cannot be converted (the
    InputError names it and says that nothing was written)."""
    if fmt not in IMPORTERS:
        raise InputError(f"unknown format {fmt!r}; runlake imports: {', '.join(IMPORTERS)}")
    return run.convert_all(IMPORTERS[fmt], KNOWN, sources, out, agent, model)


__all__ = ["IMPORTERS", "KNOWN", "ImportResult", "Importer", "run_import"]
