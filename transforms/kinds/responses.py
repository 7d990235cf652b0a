"""Response files: one test run per line (docs/formats.md#response-files)."""

from transforms.kinds.format import KindFormat

TOOL_FLAGS = ("tool_unknown", "tool_arguments_schema_violation",
              "tool_arguments_strict_violation")
"""What checking a run's tool calls against the tool registry raises."""

FORMAT = KindFormat(
    name="responses",
    suffixes=(".responses.jsonl",),
    flags=("run_id_missing", "envelope_malformed", "metadata_malformed", "score_malformed",
           "final_response_missing", "final_response_empty",
           "final_response_absent_unfinished", "final_response_truncated",
           "final_response_alias_used", "response_contract_violation", "messages_missing",
           "messages_malformed", "tool_call_unnamed", "tool_arguments_invalid_json",
           "tool_result_orphan", "tool_call_unanswered", *TOOL_FLAGS),
    checks_tools=True,
    help="one test run per line",
    order=0,
    normalizer_class="transforms.normalize.responses:ResponseNormalizer",
)
