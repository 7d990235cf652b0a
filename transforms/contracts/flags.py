"""The one catalog of flag codes: what each finding means, how bad it is, and where it comes from.

Every flag row in the lake carries a code from this catalog; the `flag_codes` table of
`warehouse.duckdb`, the data dictionary's table of codes (docs/) and the tests are all
generated from or checked against `CATALOG`. Add a code here first, then raise it.
"""

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning", "info"]
"""error: the run cannot be trusted as reported; warning: data was repaired, dropped or looks
wrong; info: worth knowing, not wrong."""

Category = Literal["contract", "truncation", "integrity"]
"""contract: the record breaks its source document's contract; truncation: something was cut
at a limit; integrity: records disagree with each other or with themselves."""

Entity = Literal["run", "message", "tool_call", "span", "llm_call", "file"]
"""What a finding is about."""

# Where each rule is stated for users (a page of docs/ and its section; a test checks them).
RESPONSE_SCHEMA = "docs/formats.md#response-files"
RESPONSE_CONTRACT = "docs/formats.md#the-response-contract"
SPANS_BULK = "docs/formats.md#span-files"
DURABLE_STATE = "docs/formats.md#durable-agent-state-files"
TOOL_SCHEMA = "docs/formats.md#tool-registry"
FORMATS = "docs/formats.md#response-files"
SPAN_LINKS = "docs/formats.md#how-spans-meet-runs"
REPEATED_RUN = "docs/lake.md#a-repeated-run_id"
SCORES = "docs/formats.md#scores-and-evaluations"


@dataclass(frozen=True)
class FlagSpec:
    code: str
    severity: Severity
    category: Category
    entity: Entity
    description: str
    source: str


_SPECS: tuple[FlagSpec, ...] = (
    FlagSpec("final_response_missing", "error", "contract", "run",
             "No final_response (for a multi-turn turn: neither message nor final_response), "
             "or it is not a string. When the run's outcome is error or skipped, an absent one "
             "is final_response_absent_unfinished instead.", RESPONSE_SCHEMA),
    FlagSpec("final_response_empty", "error", "contract", "run",
             "final_response is empty or only whitespace (when the run's outcome is error or "
             "skipped: final_response_absent_unfinished instead).", RESPONSE_CONTRACT),
    FlagSpec("final_response_absent_unfinished", "info", "contract", "run",
             "No final_response, or an empty or whitespace one (for a multi-turn turn: no "
             "message), on a run whose outcome status is error or skipped: a run that crashed "
             "or did not run has no answer to give, so this is not final_response_missing or "
             "final_response_empty and breaks no contract.", RESPONSE_CONTRACT),
    FlagSpec("final_response_truncated", "warning", "truncation", "run",
             "final_response is over 50,000 characters; the platform truncates it, runlake keeps "
             "the first 50,000 in runs.final_response and the original length in "
             "final_response_chars.", RESPONSE_SCHEMA),
    FlagSpec("response_contract_violation", "error", "contract", "run",
             "The rich+strict response contract is on and no assistant message has non-empty "
             "text; the run's status becomes contract_violation and the judge is skipped.",
             RESPONSE_CONTRACT),
    FlagSpec("messages_missing", "info", "contract", "run",
             "No messages (absent, null or []): a final-answer-only run, graded on "
             "final_response alone.",
             RESPONSE_CONTRACT),
    FlagSpec("messages_malformed", "warning", "contract", "run",
             "messages is not a list, or an entry is not an object with a valid role, or a "
             "content is not a string, array or null (or a content part or thinking block is "
             "nested more than 254 levels deep: kept whole as JSON text); the run falls back to "
             "a thin trace, valid entries are kept and the dropped ones are counted in the "
             "detail.", RESPONSE_SCHEMA),
    FlagSpec("tool_call_unnamed", "warning", "contract", "tool_call",
             "A tool call with neither `name` nor `function.name`: dropped from tool_calls.",
             RESPONSE_SCHEMA),
    FlagSpec("tool_arguments_invalid_json", "warning", "contract", "tool_call",
             "String tool arguments that do not parse as JSON, or arguments nested more than "
             "254 levels deep; tool_calls.arguments is null and arguments_raw keeps the text.",
             RESPONSE_SCHEMA),
    FlagSpec("tool_result_orphan", "warning", "integrity", "message",
             "A tool message whose tool_call_id matches no earlier tool call of the run.",
             RESPONSE_SCHEMA),
    FlagSpec("tool_call_unanswered", "info", "integrity", "tool_call",
             "A tool call that no later tool message answers.", RESPONSE_SCHEMA),
    FlagSpec("metadata_malformed", "warning", "contract", "run",
             "metadata is present but not an object, or a common key has the wrong type or a "
             "count beyond 64 bits (the column is null and the key is not copied to "
             "metadata_kv), or another key's value is nested more than 254 levels deep (kept "
             "whole in metadata_kv).", RESPONSE_SCHEMA),
    FlagSpec("run_id_missing", "warning", "integrity", "run",
             "The line has no run_id; a stable id was derived from the line's bytes.", FORMATS),
    FlagSpec("run_id_duplicate", "warning", "integrity", "run",
             "The same run_id was seen on another line; the later line (by source file path, "
             "then line number) wins in runs, the detail names both lines.", REPEATED_RUN),
    FlagSpec("envelope_malformed", "warning", "contract", "run",
             "An envelope field has the wrong type or value (timestamps that are not RFC 3339 "
             "or fall outside the UTC days 0002-01-01 to 9998-12-31, an unknown outcome status, "
             "a score outside 0..1, ...); the field is null. An outcome error or explanation "
             "nested more than 254 levels deep is kept whole as JSON text.", FORMATS),
    FlagSpec("final_response_alias_used", "info", "contract", "run",
             "A multi-turn turn answered with final_response instead of message.",
             RESPONSE_CONTRACT),
    FlagSpec("score_malformed", "warning", "contract", "run",
             "An entry of outcome.scores that cannot be read as a score: an empty name or a "
             "bare value that is not a finite number (the entry is dropped), an entry whose "
             "value is not a finite number (kept, value null), a label or explanation that is "
             "not text (kept as JSON text), a name over 200 characters (cut), or over 1,000 "
             "entries (the rest are dropped). The detail says which.", SCORES),
    FlagSpec("evaluation_malformed", "warning", "contract", "span",
             "A gen_ai.evaluation.result span event or OTLP log record that cannot be read as "
             "a score: no gen_ai.evaluation.name (dropped), a score value that is not a finite "
             "number (null), a label or explanation that is not text (kept as JSON text), a "
             "name over 200 characters (cut), a log record's time that is not Unix "
             "nanoseconds of a day from 0002-01-01 to 9998-12-31 (scored on its file's day). "
             "The detail says which.", SCORES),
    FlagSpec("log_records_skipped", "info", "contract", "span",
             "OTLP log records that are not gen_ai.evaluation.result events: runlake reads "
             "evaluations from logs and counts the others here, one finding per line.",
             SCORES),
    FlagSpec("span_malformed", "warning", "contract", "span",
             "A span that breaks the Span schema: not an object or no trace/span id (dropped), "
             "or a field of the wrong type or out of range (null in its column); in OTLP files "
             "also a break of the OTel GenAI conventions (kept); attributes nested more than 254 "
             "levels deep (kept whole as JSON text). The detail says which.",
             SPANS_BULK),
    FlagSpec("span_end_before_start", "error", "integrity", "span",
             "A span's end_time is before its start_time.", SPANS_BULK),
    FlagSpec("span_parent_missing", "warning", "integrity", "span",
             "parent_id names no span of the same trace.", SPAN_LINKS),
    FlagSpec("span_outside_run_window", "warning", "integrity", "span",
             "Spans name a run (by their run_id attribute, else by sharing its trace) that "
             "exists but whose day is further than a day from theirs (a wrong clock, say): they "
             "count toward no run, whose tokens, runtime and cost then come from its line or "
             "the price table. One finding per trace, run and day of such spans, on the "
             "earliest; the detail gives the offset in days.", SPAN_LINKS),
    FlagSpec("llm_partial_response", "warning", "truncation", "llm_call",
             "The provider returned a partial response (error_type PROVIDER_PARTIAL_RESPONSE).",
             SPANS_BULK),
    FlagSpec("llm_output_truncated", "warning", "truncation", "llm_call",
             "output_tokens reached parameters.max_tokens (or max_output_tokens), or an OTLP "
             "span's finish reason is length.", SPANS_BULK),
    FlagSpec("llm_error_message_truncated", "info", "truncation", "llm_call",
             "error_message is at its 1,024-character limit.", SPANS_BULK),
    FlagSpec("llm_status_error_type_mismatch", "warning", "contract", "llm_call",
             "error_type is not allowed with the request's status.", SPANS_BULK),
    FlagSpec("chat_content_not_blocks", "warning", "contract", "llm_call",
             "log_request chat content is a plain string, not an array of blocks.", SPANS_BULK),
    FlagSpec("tokens_mismatch", "warning", "integrity", "run",
             "The run's metadata token totals disagree with the sum of its LLM calls beyond the "
             "tolerance.", SPAN_LINKS),
    FlagSpec("runtime_mismatch", "warning", "integrity", "run",
             "agent_runtime_ms disagrees with the root span's duration beyond the tolerance.",
             SPAN_LINKS),
    FlagSpec("tool_unknown", "warning", "contract", "tool_call",
             "A call of a tool the registry does not list for that agent.", TOOL_SCHEMA),
    FlagSpec("tool_arguments_schema_violation", "warning", "contract", "tool_call",
             "Arguments fail the registered tool's JSON schema (detail: the JSON path of the "
             "first error).", TOOL_SCHEMA),
    FlagSpec("tool_arguments_strict_violation", "warning", "contract", "tool_call",
             "A strict tool's arguments carry a property outside its schema or miss a declared "
             "one.", TOOL_SCHEMA),
    FlagSpec("schema_version_invalid", "warning", "contract", "run",
             "A durable state document whose schemaVersion is not N.N.N.", DURABLE_STATE),
)

CATALOG: dict[str, FlagSpec] = {spec.code: spec for spec in _SPECS}


def spec(code: str) -> FlagSpec:
    """The catalog entry of `code`; a KeyError names codes that were never declared."""
    return CATALOG[code]
