"""Span files: one span, or one bulk body of spans, per line (docs/formats.md#span-files)."""

from transforms.kinds.format import KindFormat

FORMAT = KindFormat(
    name="spans",
    suffixes=(".spans.jsonl",),
    flags=("span_malformed", "span_end_before_start", "evaluation_malformed",
           "llm_partial_response", "llm_output_truncated", "llm_error_message_truncated",
           "llm_status_error_type_mismatch", "chat_content_not_blocks", "messages_missing",
           "messages_malformed", "tool_call_unnamed", "tool_arguments_invalid_json"),
    # Unchecked: an LLM call's prompt repeats the run's tool calls, checked once in its run.
    checks_tools=False,
    help="one span, or a bulk body of spans, per line",
    order=1,
    normalizer_class="transforms.normalize.spans:SpanNormalizer",
)
