"""OTLP files: OpenTelemetry export records or spans, one per line
(docs/formats.md#otlp-files), each span read as a span of a span file."""

from transforms.kinds.format import KindFormat
from transforms.kinds.spans import FORMAT as SPANS

FORMAT = KindFormat(
    name="otlp",
    suffixes=(".otlp.jsonl",),
    flags=(*SPANS.flags, "log_records_skipped"),
    help="one OpenTelemetry export record or span per line",
    order=2,
    normalizer_class="transforms.normalize.otlp:OtlpNormalizer",
)
