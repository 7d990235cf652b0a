"""Arrow schemas of the lake tables, with a description and unit for every column.

This module is the one declaration of runlake's tables: the normalizers build Arrow tables
against these schemas, the warehouse makes typed empty views from them, and the data
dictionary (docs/data-dictionary.md) is generated from them (`python -m devtools.docs`).
Each table is a Delta table partitioned by `month` (YYYY-MM of `day`, see transforms.lake);
`day` is a column of every table, stored in its files.
"""

from dataclasses import dataclass
from typing import Literal

import pyarrow as pa

Status = Literal["passed", "failed", "error", "skipped", "contract_violation", "ungraded"]
"""passed/failed/error/skipped: the envelope's outcome; contract_violation: the run tripped the
rich+strict response contract (judge skipped); ungraded: no outcome was given."""

ContentKind = Literal["string", "parts", "null"]
"""string: content was a plain string; parts: an array of typed parts; null: no content."""

CallShape = Literal["flat", "nested"]
"""flat: {id, name, arguments}; nested: {id, type: "function", function: {name, arguments}}."""

ContractMode = Literal["lenient", "rich_strict"]
"""lenient: final_response is graded; rich_strict: an assistant message with text is required."""

TraceMode = Literal["rich", "thin"]
"""rich: a well-formed transcript; thin: final_response only (messages missing or malformed)."""

STATUSES: tuple[str, ...] = ("passed", "failed", "error", "skipped", "contract_violation",
                             "ungraded")

TS = pa.timestamp("us", tz="UTC")


@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType
    doc: str


@dataclass(frozen=True)
class Table:
    name: str
    grain: str
    columns: tuple[Column, ...]

    @property
    def schema(self) -> pa.Schema:
        """The schema of the rows a normalizer builds (day included)."""
        return pa.schema([pa.field(c.name, c.type) for c in self.columns])

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]


def _c(name: str, typ: pa.DataType, doc: str) -> Column:
    return Column(name, typ, doc)


DAY = _c("day", pa.date32(), "UTC day of the run (the Delta table is partitioned by its "
         "month).")
FILE_DAY = _c("day", pa.date32(), "Day of the file: its YYYY-MM-DD folder, else the ingest "
              "date.")
SOURCE_FILE = _c("source_file", pa.string(),
                 "Input file, as its absolute path.")
SOURCE_LINE = _c("source_line", pa.int64(), "1-based line number in source_file.")
RUN_ID = _c("run_id", pa.string(), "The run's id (envelope run_id, or derived: see flags).")

RUNS = Table("runs", "one run, or one turn of a multi-turn session", (
    RUN_ID, DAY,
    _c("agent", pa.string(), "Agent name (envelope agent/agent_id/agent_name), else 'unknown'."),
    _c("agent_version", pa.string(), "Agent version from the envelope."),
    _c("model", pa.string(), "The canonical requested model (what views group by): model_raw "
       "without its provider prefix, dated snapshots mapped to their family by the alias table; "
       "else 'unknown'. The lake file keeps the line's own name."),
    _c("test_case_id", pa.string(), "Test case (envelope test_case_id/case_id/scenario_id)."),
    _c("batch_id", pa.string(), "Nightly batch; defaults to the run's day (YYYY-MM-DD)."),
    _c("trace_id", pa.string(), "Trace id joining the run to its spans."),
    _c("session_id", pa.string(), "Multi-turn session id."),
    _c("turn_index", pa.int64(), "Turn number within the session."),
    _c("session_done", pa.bool_(), "The turn said the session is over (response.session_done); "
       "null when it did not say."),
    _c("started_at", TS, "Run start (UTC)."),
    _c("ended_at", TS, "Run end (UTC)."),
    _c("status", pa.string(), "passed, failed, error, skipped, contract_violation or ungraded."),
    _c("score", pa.float64(), "Outcome score in 0..1."),
    _c("judge_skipped", pa.bool_(), "True when the judge did not grade the run."),
    _c("outcome_error", pa.string(), "The outcome's error text."),
    _c("outcome_explanation", pa.string(), "Why the grader decided as it did: outcome."
       "explanation (alias outcome.reason); JSON text when not a string. Importers fill it "
       "from the source's grading (Inspect's score explanation, tau-bench and tau2 reward "
       "info)."),
    _c("contract_mode", pa.string(), "lenient or rich_strict."),
    _c("trace_mode", pa.string(), "rich (well-formed transcript) or thin."),
    _c("final_response", pa.string(), "The answer, cut at 50,000 characters."),
    _c("final_response_chars", pa.int64(), "Original length of final_response in characters."),
    _c("final_response_truncated", pa.bool_(), "final_response is over 50,000 characters."),
    _c("n_messages", pa.int64(), "Messages kept in `messages`."),
    _c("n_tool_calls", pa.int64(), "Tool calls kept in `tool_calls`."),
    _c("n_thinking", pa.int64(), "Reasoning blocks kept in `thinking`."),
    _c("input_tokens", pa.int64(), "metadata.total_input_tokens, else the sum of the run's LLM "
       "calls' input_tokens; null if unknown."),
    _c("output_tokens", pa.int64(), "metadata.total_output_tokens, else the sum of the run's "
       "LLM calls' output_tokens; null if unknown."),
    _c("agent_runtime_ms", pa.float64(), "metadata.agent_runtime_ms, else the duration of the "
       "run's root span; null if unknown."),
    _c("system_prompt_id", pa.string(), "metadata.system_prompt_id."),
    _c("tokens_source", pa.string(), "Where the token totals came from: metadata, spans or "
       "none."),
    _c("record_shape", pa.string(), "envelope (a wrapped run), bare (a bare response body) or "
       "trace (in the view: a trace that no response line claims, made a run from its spans)."),
    SOURCE_FILE, SOURCE_LINE,
))

MESSAGES = Table("messages", "one message of a run's transcript", (
    RUN_ID, DAY,
    _c("message_index", pa.int64(), "0-based position in the run's messages list."),
    _c("role", pa.string(), "system, user, assistant or tool."),
    _c("content_kind", pa.string(), "string, parts or null."),
    _c("text", pa.string(), "The text: the string, or the concatenated text parts."),
    _c("chars", pa.int64(), "Length of text in characters; null when there is no text."),
    _c("part_types", pa.list_(pa.string()), "Types of the content parts, in order."),
    _c("other_parts", pa.string(), "JSON of the non-text parts (images, files, ...)."),
    _c("n_tool_calls", pa.int64(), "Tool calls kept from this message."),
    _c("tool_call_id", pa.string(), "For tool messages: the call this answers."),
    _c("name", pa.string(), "The message's name field (tool name on tool messages)."),
    _c("n_thinking", pa.int64(), "Reasoning blocks on this message."),
    _c("source", pa.string(), "response (the run's transcript) or span (a span's log_request)."),
    _c("span_id", pa.string(), "The span the message came from, when source is span."),
    _c("direction", pa.string(), "For span messages: input (the prompt) or output (the reply)."),
    SOURCE_FILE, SOURCE_LINE,
))

TOOL_CALLS = Table("tool_calls", "one tool call", (
    RUN_ID, DAY,
    _c("message_index", pa.int64(), "The assistant message holding the call."),
    _c("call_index", pa.int64(), "0-based position in that message's tool_calls list."),
    _c("call_id", pa.string(), "The call's id."),
    _c("tool_name", pa.string(), "name, or function.name for the nested shape."),
    _c("arguments", pa.string(), "Arguments as canonical JSON (sorted keys, no spaces; "
       "integers beyond 64 bits with every digit); null when absent, not valid JSON or nested "
       "more than 254 levels deep."),
    _c("arguments_raw", pa.string(), "The original text of arguments that are not valid JSON "
       "(the JSON text of arguments nested more than 254 levels deep)."),
    _c("arguments_valid", pa.bool_(), "False when string arguments do not parse as JSON, or "
       "arguments nest more than 254 levels deep."),
    _c("arguments_chars", pa.int64(), "Length of arguments in characters."),
    _c("call_shape", pa.string(), "flat or nested."),
    _c("result_message_index", pa.int64(), "The tool message answering the call."),
    _c("result_chars", pa.int64(), "Length of that tool message's text in characters."),
    _c("source", pa.string(), "response or span."),
    _c("span_id", pa.string(), "The span the call came from, when source is span."),
    SOURCE_FILE, SOURCE_LINE,
))

THINKING = Table("thinking", "one reasoning block", (
    RUN_ID, DAY,
    _c("message_index", pa.int64(), "The message holding the block."),
    _c("block_index", pa.int64(), "0-based position in that message's thinking list."),
    _c("text", pa.string(), "The block's text key (a thinking block's thinking key), else "
       "the JSON of the block."),
    _c("chars", pa.int64(), "Length of text in characters."),
    _c("span_id", pa.string(), "The span the block came from, for a span's messages."),
    SOURCE_FILE, SOURCE_LINE,
))

METADATA_KV = Table("metadata_kv", "one metadata key of a run outside the five common keys", (
    RUN_ID, DAY,
    _c("key", pa.string(), "The metadata key."),
    _c("value", pa.string(), "The value as JSON text (integers beyond 64 bits with every "
       "digit)."),
    SOURCE_FILE, SOURCE_LINE,
))

SPANS = Table("spans", "one span", (
    _c("trace_id", pa.string(), "context.trace_id."),
    _c("span_id", pa.string(), "context.span_id."),
    _c("parent_id", pa.string(), "The parent span's id; null for a root."),
    RUN_ID,
    DAY,
    _c("agent", pa.string(), "Attribute agent.name or gen_ai.agent.name, else the "
       "gen_ai.agent.name of the nearest invoke_agent ancestor in the trace (in the view: over "
       "every file and ingest), else service.name."),
    _c("name", pa.string(), "The span's name."),
    _c("kind", pa.string(), "CLIENT, CONSUMER, INTERNAL, PRODUCER or SERVER."),
    _c("start_time", TS, "Start (UTC, from Unix nanoseconds)."),
    _c("end_time", TS, "End (UTC, from Unix nanoseconds)."),
    _c("duration_ms", pa.float64(), "end_time - start_time in milliseconds."),
    _c("status_code", pa.string(), "OK, ERROR or UNSET."),
    _c("status_description", pa.string(), "The status description."),
    _c("service_name", pa.string(), "resource.attributes service.name."),
    _c("attributes", pa.string(), "The span's attributes as JSON text."),
    _c("resource_attributes", pa.string(), "resource.attributes as JSON text."),
    _c("n_events", pa.int64(), "Span events."),
    _c("has_log_request", pa.bool_(), "True when the span carries an LLM call (log_request)."),
    _c("operation", pa.string(), "Attribute gen_ai.operation.name (chat, execute_tool, "
       "invoke_agent, ...)."),
    _c("tool_name", pa.string(), "Attribute gen_ai.tool.name: the tool an execute_tool span "
       "ran."),
    _c("tool_call_id", pa.string(), "Attribute gen_ai.tool.call.id: joins an execute_tool span "
       "to tool_calls.call_id."),
    _c("span_index", pa.int64(), "0-based position of the span in its line (bulk lines)."),
    SOURCE_FILE, SOURCE_LINE,
))

LLM_CALLS = Table("llm_calls", "one LLM call: a span's log_request", (
    _c("span_id", pa.string(), "The span carrying the call."),
    _c("trace_id", pa.string(), "The span's trace."),
    RUN_ID,
    DAY,
    _c("agent", pa.string(), "The span's agent (spans.agent)."),
    _c("provider", pa.string(), "log_request.provider."),
    _c("model", pa.string(), "log_request.model, exactly as the source wrote it."),
    _c("input_tokens", pa.int64(), "log_request.input_tokens as the provider counts them "
       "(cached prompt tokens included); null when absent."),
    _c("output_tokens", pa.int64(), "log_request.output_tokens (reasoning tokens included); "
       "null when absent."),
    _c("cached_input_tokens", pa.int64(), "Cached prompt tokens, when the span's attributes "
       "give them (part of input_tokens, not added to it)."),
    _c("reasoning_tokens", pa.int64(), "Reasoning tokens, when the span's attributes give them "
       "(part of output_tokens)."),
    _c("price", pa.float64(), "log_request.price (USD); in the view, else the call's tokens at "
       "the price table's rates (see price_source)."),
    _c("status", pa.string(), "SUCCESS, WARNING or ERROR."),
    _c("error_type", pa.string(), "The categorized error, e.g. PROVIDER_TIMEOUT."),
    _c("error_message", pa.string(), "The error message (at most 1,024 characters)."),
    _c("error_message_chars", pa.int64(), "Length of error_message in characters."),
    _c("request_start_time", TS, "Request start (UTC); the span's start when omitted."),
    _c("request_end_time", TS, "Request end (UTC); the span's end when omitted."),
    _c("latency_ms", pa.float64(), "request_end_time - request_start_time in milliseconds."),
    _c("max_tokens", pa.int64(), "parameters.max_tokens or max_output_tokens."),
    _c("prompt_name", pa.string(), "log_request.prompt_name."),
    _c("prompt_version_number", pa.int64(), "log_request.prompt_version_number."),
    _c("n_input_messages", pa.int64(), "Messages in the input prompt."),
    _c("n_output_messages", pa.int64(), "Messages in the output."),
    SOURCE_FILE, SOURCE_LINE,
))

FLAGS = Table("flags", "one finding", (
    _c("entity", pa.string(), "run, message, tool_call, span, llm_call or file."),
    RUN_ID, DAY,
    _c("span_id", pa.string(), "The span concerned, for span and llm_call findings."),
    _c("message_index", pa.int64(), "The message concerned, when there is one."),
    _c("call_index", pa.int64(), "The tool call concerned, when there is one."),
    _c("tool_name", pa.string(), "The tool concerned: the call's name, or the name of an "
       "orphan tool message."),
    _c("code", pa.string(), "Flag code (see flag_codes)."),
    _c("severity", pa.string(), "error, warning or info."),
    _c("category", pa.string(), "contract, truncation or integrity."),
    _c("detail", pa.string(), "What exactly was found."),
    _c("source", pa.string(), "Where the finding was made: response (reading the run's own "
       "line: its transcript, envelope and metadata), span (reading a span or an LLM call's "
       "prompt and reply) or derived (comparing records: across tables in the warehouse, or "
       "two lines with one run_id)."),
    _c("finding_key", pa.string(), "What the finding is about, for findings that an LLM call's "
       "prompt can repeat: tool_call:<call id>:<hash of name and arguments>, or "
       "message:<hash of role and content>. The public flags view keeps one row per run (or "
       "trace), code and key; null: the row is a finding of its own."),
    SOURCE_FILE, SOURCE_LINE,
))

SCORES = Table("scores", "one named score or evaluation of a run", (
    RUN_ID, DAY,
    _c("name", pa.string(), "The score's name: the key of outcome.scores, or "
       "gen_ai.evaluation.name."),
    _c("value", pa.float64(), "The score's number (gen_ai.evaluation.score.value); null when it "
       "has none."),
    _c("label", pa.string(), "The score's label as given (gen_ai.evaluation.score.label: pass, "
       "fail, correct, ...); null when it has none."),
    _c("explanation", pa.string(), "Why it was given (gen_ai.evaluation.explanation), at most "
       "50,000 characters."),
    _c("source", pa.string(), "response (a response line's outcome.scores), span_event (a "
       "gen_ai.evaluation.result span event) or log_record (a gen_ai.evaluation.result OTLP log "
       "record)."),
    _c("trace_id", pa.string(), "The trace of the evaluated span (span events and log records)."),
    _c("span_id", pa.string(), "The evaluated span (span events and log records)."),
    _c("response_id", pa.string(), "gen_ai.response.id: the LLM response evaluated, which links "
       "a log record without a trace to the span that reports that response."),
    _c("score_index", pa.int64(), "0-based position of the score among those its line holds."),
    SOURCE_FILE, SOURCE_LINE,
))

QUARANTINE = Table("quarantine", "one input line that could not be read as a record", (
    SOURCE_FILE, FILE_DAY,
    _c("line_number", pa.int64(), "1-based line number."),
    _c("byte_offset", pa.int64(), "Offset of the line's first byte (in the decompressed stream)."),
    _c("error_code", pa.string(), "invalid_utf8, nul_byte, invalid_json, not_an_object or "
       "unrecognized_record."),
    _c("error_message", pa.string(), "What is wrong, with the parser's position."),
    _c("raw", pa.binary(), "The line's bytes, whole, without its line terminator."),
))

INGEST_FILES = Table("ingest_files", "one input file", (
    SOURCE_FILE, FILE_DAY,
    _c("kind", pa.string(), "responses, spans, ..., or unknown when the kind cannot be told."),
    _c("compression", pa.string(), "none, gzip or zstd."),
    _c("sha256", pa.string(), "SHA-256 of the file's bytes as stored; for a file over 16 MiB, "
       "SHA-256 of the SHA-256 digests of its 16 MiB pieces in order (so that workers hash "
       "the pieces they read)."),
    _c("bytes", pa.int64(), "File size in bytes as stored."),
    _c("lines", pa.int64(), "Lines read (a last line without newline counts)."),
    _c("lines_accepted", pa.int64(), "Lines that became rows."),
    _c("lines_quarantined", pa.int64(), "Lines that went to quarantine."),
    _c("lines_blank", pa.int64(), "Empty or whitespace-only lines."),
    _c("days", pa.list_(pa.date32()), "Days this file's rows landed in."),
    _c("error", pa.string(), "Why the file could not be read to its end, if it could not."),
    _c("ingested_at", TS, "When the file was ingested (UTC)."),
    _c("tools_sha256", pa.string(), "SHA-256 of the tool registry its tool calls were checked "
       "against (null: none)."),
))

TABLES: dict[str, Table] = {t.name: t for t in (
    RUNS, MESSAGES, TOOL_CALLS, THINKING, METADATA_KV, SPANS, LLM_CALLS, SCORES, FLAGS,
    QUARANTINE, INGEST_FILES)}

PARTITION = "month"
"""The column (YYYY-MM of `day`) each lake table's Delta table and staged parts are partitioned
by: `<table>/month=YYYY-MM/`."""
MANIFEST = "ingest_files"
"""The lake's manifest table: one row per input file, committed last (transforms.lake.core)."""

# Tables whose rows belong to one input line of a run: superseded together when a later line
# carries the same run_id.
RUN_TABLES = ("runs", "messages", "tool_calls", "thinking", "metadata_kv", "flags")
LINKED = ("messages", "tool_calls", "thinking", "metadata_kv")
"""The tables whose rows the lake shows as they were written, once their run is known and
their line is not replaced by a later one: a staged file of them holds one week's rows, and
the lake table shows it as it is (transforms.warehouse.linked)."""


VIEW_COLUMNS: dict[str, tuple[Column, ...]] = {
    "runs": (
        _c("model_raw", pa.string(), "The exact model name of metadata.model, else the "
           "envelope's model, else the most frequent one of the run's LLM calls."),
        _c("response_model", pa.string(), "The exact model name the run's LLM calls report "
           "(the most frequent); null without LLM calls that name one."),
        _c("cost_usd", pa.float64(), "USD: the sum of the run's LLM call prices when every call "
           "with tokens is priced, else its token totals at the price table's rates for its "
           "model in force on the run's day (no cache discount); null when the model is not in "
           "the table, the day is before its first price period, or tokens are unknown."),
        _c("price_source", pa.string(), "Where cost_usd came from: source (every LLM call "
           "carried its price), table (the price table priced some or all of it) or null."),
        _c("price_from", pa.date32(), "The first day of the price period that priced cost_usd "
           "from the table (of the run's LLM calls' periods: the latest); null when price_source "
           "is not table, or the model has a single price (in force on every day)."),
    ),
    "scores": (
        _c("verdict", pa.string(), "What the label says of the run: pass (pass, passed, true, "
           "correct), fail (fail, failed, false, incorrect; any case) or null."),
    ),
    "llm_calls": (
        _c("canonical_model", pa.string(), "model as the alias table names it (what views "
           "group by)."),
        _c("price_source", pa.string(), "source (log_request.price), table (the call's tokens "
           "at the price table's rates, cached input tokens at the cached rate) or null."),
        _c("price_from", pa.date32(), "The first day of the price period that priced the call "
           "from the table: the period in force on its run's day (its own day when it counts "
           "toward no run); null when price_source is not table, or the model has a single "
           "price."),
    ),
}
"""Columns the warehouse views add to a lake table, resolved when the warehouse is built from
the whole lake and the model alias and price tables (transforms.contracts.models), never stored."""
