"""Span files: one span, or one bulk body of spans, per line (docs/formats.md#span-files)."""

from datetime import date
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transforms.contracts.registry import Registry
    from transforms.normalize.columns import ColumnBuffers
    from transforms.normalize.spans import SpanNormalizer


class Spans:
    name = "spans"
    suffixes = (".spans.jsonl",)
    document_endings = ()
    flags = ("span_malformed", "span_end_before_start", "evaluation_malformed",
             "llm_partial_response", "llm_output_truncated", "llm_error_message_truncated",
             "llm_status_error_type_mismatch", "chat_content_not_blocks", "messages_missing",
             "messages_malformed", "tool_call_unnamed", "tool_arguments_invalid_json")
    checks_tools = False  # an LLM call's prompt repeats the run's calls: checked once, there
    help = "one span, or a bulk body of spans, per line"
    order = 1

    def normalizer(self, source_file: str, fallback_day: date, buffers: "ColumnBuffers",
                   registry: "Registry | None" = None) -> "SpanNormalizer":
        from transforms.normalize.spans import SpanNormalizer

        return SpanNormalizer(source_file, fallback_day, buffers)


FORMAT = Spans()
