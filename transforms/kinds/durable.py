"""Durable agent state files: one run per document (docs/formats.md#durable-agent-state-files),
read as a response record."""

from datetime import date
from typing import TYPE_CHECKING

from transforms.kinds.responses import FORMAT as RESPONSES

if TYPE_CHECKING:
    from transforms.contracts.registry import Registry
    from transforms.normalize.columns import ColumnBuffers
    from transforms.normalize.durable import DurableNormalizer


class Durable:
    name = "durable"
    suffixes = (".durable.json", ".durable.jsonl")
    document_endings = (".json",)
    flags = (*RESPONSES.flags, "schema_version_invalid")
    checks_tools = True
    help = "Agent Framework durable agent state, one run per document"
    order = 3

    def normalizer(self, source_file: str, fallback_day: date, buffers: "ColumnBuffers",
                   registry: "Registry | None" = None) -> "DurableNormalizer":
        from transforms.normalize.durable import DurableNormalizer

        norm = DurableNormalizer(source_file, fallback_day, buffers)
        norm.use_registry(registry)
        return norm


FORMAT = Durable()
