-- materialized: macro
-- Purpose: the finding-once rule. The observations of one finding that later LLM calls' prompts
-- repeat (one finding_key: a tool call or a message a run's transcript holds and its LLM calls
-- resend) are one finding per code and scope: the observation's run when it is known, else its
-- trace ('trace:' || trace_id). Null when each observation is a finding of its own: it has no
-- finding_key, or neither a run nor a trace. intermediate.int_flags keeps one row per scope,
-- code and finding_key (and day, for a finding not placed with its run); the ingest summary
-- counts the same (transforms/ingest_summary.py).
-- Grain: a scalar macro over one observation.
create or replace macro finding_scope(run_id, trace_id, finding_key) as
    case when finding_key is not null then coalesce(run_id, 'trace:' || trace_id) end
