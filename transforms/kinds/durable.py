"""Durable agent state files: one run per document (docs/formats.md#durable-agent-state-files),
read as a response record."""

from transforms.kinds.format import KindFormat
from transforms.kinds.responses import FORMAT as RESPONSES

FORMAT = KindFormat(
    name="durable",
    suffixes=(".durable.json", ".durable.jsonl"),
    document_endings=(".json",),
    flags=(*RESPONSES.flags, "schema_version_invalid"),
    checks_tools=True,
    help="Agent Framework durable agent state, one run per document",
    order=3,
    normalizer_class="transforms.normalize.durable:DurableNormalizer",
)
