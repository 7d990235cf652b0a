"""OTLP files: OpenTelemetry export records or spans, one per line
(docs/formats.md#otlp-files), each span read as a span of a span file."""

from datetime import date
from typing import TYPE_CHECKING

from transforms.kinds.spans import FORMAT as SPANS

if TYPE_CHECKING:
    from transforms.contracts.registry import Registry
    from transforms.normalize.columns import ColumnBuffers
    from transforms.normalize.otlp import OtlpNormalizer


class Otlp:
    name = "otlp"
    suffixes = (".otlp.jsonl",)
    document_endings = ()
    flags = (*SPANS.flags, "log_records_skipped")
    checks_tools = False
    help = "one OpenTelemetry export record or span per line"
    order = 2

    def normalizer(self, source_file: str, fallback_day: date, buffers: "ColumnBuffers",
                   registry: "Registry | None" = None) -> "OtlpNormalizer":
        from transforms.normalize.otlp import OtlpNormalizer

        return OtlpNormalizer(source_file, fallback_day, buffers)


FORMAT = Otlp()
