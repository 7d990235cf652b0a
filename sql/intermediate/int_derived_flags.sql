-- materialized: table
-- stored: _derived/int_derived_flags
-- partition: week
-- Purpose: findings that need several records: a span whose parent is not among its trace's
-- spans within a day of it, a
-- run whose metadata totals disagree with its spans, and a run_id carried by several lines
-- (the later line wins; the flag is on each earlier line). Tolerances: tokens differ by more than
-- 2% of the larger count and more than 10 tokens; runtime by more than 10% and more than 500 ms.
-- Grain: one row per finding, in the columns of the flags table, with run_day (the day of the
-- run the finding counts toward, when it is within a day of it).
create or replace view intermediate.int_derived_flags as
with codes as (
    select code, severity, category from flag_codes
),

orphans as (
    select
        'span' as entity,
        span_runs.run_id,
        span_runs.near_run_day as run_day,
        spans.day,
        spans.span_id,
        'span_parent_missing' as code,
        printf('span %s names parent %s, which is not a span of trace %s',
               spans.span_id, spans.parent_id, spans.trace_id) as detail,
        spans.source_file,
        spans.source_line
    from staging.stg_spans as spans
    left join intermediate.int_span_runs as span_runs
        on
            spans.source_file = span_runs.source_file
            and spans.source_line = span_runs.source_line
            and spans.span_id = span_runs.span_id
    where spans.parent_id is not null
      and not exists (
          select 1 from staging.stg_spans as parent
          where parent.trace_id = spans.trace_id and parent.span_id = spans.parent_id
            and within_reach(parent.day, spans.day)
      )
),

runs as (
    select run_id, day, input_tokens, output_tokens, agent_runtime_ms, source_file, source_line
    from staging.stg_runs
),

token_gaps as (
    select
        'run' as entity,
        runs.run_id,
        runs.day as run_day,
        runs.day,
        null as span_id,
        'tokens_mismatch' as code,
        printf('metadata says %s input / %s output tokens; its %d LLM calls sum to %s / %s',
               coalesce(runs.input_tokens::varchar, '-'),
               coalesce(runs.output_tokens::varchar, '-'), totals.n_llm_calls,
               coalesce(totals.input_tokens::varchar, '-'),
               coalesce(totals.output_tokens::varchar, '-')) as detail,
        runs.source_file,
        runs.source_line
    from runs
    inner join intermediate.int_run_llm_totals as totals on runs.run_id = totals.run_id
    where (abs(runs.input_tokens - totals.input_tokens)
           > greatest(10, 0.02 * greatest(runs.input_tokens, totals.input_tokens)))
       or (abs(runs.output_tokens - totals.output_tokens)
           > greatest(10, 0.02 * greatest(runs.output_tokens, totals.output_tokens)))
),

runtime_gaps as (
    select
        'run' as entity,
        runs.run_id,
        runs.day as run_day,
        runs.day,
        roots.span_id,
        'runtime_mismatch' as code,
        printf('agent_runtime_ms is %.0f; the root span %s lasted %.0f ms',
               runs.agent_runtime_ms, roots.span_id, roots.duration_ms) as detail,
        runs.source_file,
        runs.source_line
    from runs
    inner join intermediate.int_run_root_spans as roots on runs.run_id = roots.run_id
    where abs(runs.agent_runtime_ms - roots.duration_ms)
          > greatest(500, 0.10 * greatest(runs.agent_runtime_ms, roots.duration_ms))
),

duplicates as (
    select
        'run' as entity,
        run_id,
        win_day as run_day,
        win_day as day,
        null as span_id,
        'run_id_duplicate' as code,
        printf('run_id %s is on %s:%d and again on the later line %s:%d, which wins',
               run_id, source_file, source_line, win_file, win_line) as detail,
        source_file,
        source_line
    from staging.stg_superseded_lines
),

findings as (
    select * from orphans
    union all select * from duplicates
    union all select * from token_gaps
    union all select * from runtime_gaps
)

select
    findings.entity,
    findings.run_id,
    findings.run_day,
    findings.day,
    findings.span_id,
    null::bigint as message_index,
    null::bigint as call_index,
    null::varchar as tool_name,
    findings.code,
    codes.severity,
    codes.category,
    findings.detail,
    'derived' as source,
    null::varchar as finding_key,
    findings.source_file,
    findings.source_line
from findings
inner join codes on findings.code = codes.code
