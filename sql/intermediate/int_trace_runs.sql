-- materialized: table
-- stored: _derived/int_trace_runs
-- partition: week
-- Purpose: the runs made from traces that no response line claims, in the columns of the runs
-- lake table (record_shape 'trace'; status is resolved from the root and the run's evaluations in
-- int_runs). Each run has a root span: an invoke_agent span of the trace that no other
-- invoke_agent span of the trace within a day of it starts before (the outermost: an agent's
-- span starts no later than the spans beneath it; of spans starting together, the longest,
-- then the least span_id); in a trace without invoke_agent spans, a span without a parent among
-- the trace's spans within a day of it, chosen the same way, when the trace holds LLM calls.
-- The run is made of the trace's spans within a day of its root:
--   run_id: the root's run_id attribute, else the least run_id attribute of those spans, else
--           the trace id;
--   agent: the root's agent (gen_ai.agent.name); test_case_id: the root's test case attribute,
--          else the least of those spans' (test_case_id, test_case.id, case_id, scenario_id);
--   day, started_at, ended_at, agent_runtime_ms: the root's start (UTC), end and duration;
--   outcome_error: the root's status description when its status is ERROR.
-- A response line claims the trace (and no run is made of it) when it names the trace (trace_id)
-- or the run (a run_id attribute of those spans is its run_id), however far from the root it
-- lies (a clock off by days makes the spans' span_outside_run_window findings, not a run): the
-- response line wins.
-- Grain: one row per trace root.
create or replace view intermediate.int_trace_runs as
with spans as (
    select
        trace_id,
        span_id,
        parent_id,
        run_id,
        day,
        agent,
        operation,
        start_time,
        end_time,
        duration_ms,
        status_code,
        status_description,
        has_log_request,
        coalesce(
            nullif(json_extract_string(attributes, '$."test_case_id"'), ''),
            nullif(json_extract_string(attributes, '$."test_case.id"'), ''),
            nullif(json_extract_string(attributes, '$."case_id"'), ''),
            nullif(json_extract_string(attributes, '$."scenario_id"'), '')
        ) as test_case_id,
        nullif(json_extract_string(attributes, '$."gen_ai.agent.version"'), '')
            as agent_version,
        source_file,
        source_line
    from staging.stg_spans
),

keys as (
    select run_id, trace_id from staging.stg_run_keys
),

agent_spans as (
    select * from spans where operation = 'invoke_agent'
),

-- Spans without a parent within a day, in traces with no invoke_agent span within a day.
top_spans as (
    select spans.*
    from spans
    where not exists (
        select 1 from spans as parent
        where parent.trace_id = spans.trace_id and parent.span_id = spans.parent_id
          and within_reach(parent.day, spans.day)
    )
      and not exists (
          select 1 from agent_spans
          where agent_spans.trace_id = spans.trace_id and within_reach(agent_spans.day, spans.day)
      )
      and exists (
          select 1 from spans as calls
          where calls.trace_id = spans.trace_id and calls.has_log_request
            and within_reach(calls.day, spans.day)
      )
),

-- Ordered by start, then the longest, then span_id: a span without a start or an end comes last.
candidates as (
    select
        *,
        coalesce(start_time, timestamptz '9999-12-31 00:00:00') as start_key,
        coalesce(duration_ms, -1.0) as length_key
    from (
        select * from agent_spans
        union all
        select * from top_spans
    ) as spans_
),

roots as (
    select candidates.*
    from candidates
    where not exists (
        select 1 from candidates as earlier
        where earlier.trace_id = candidates.trace_id
          and within_reach(earlier.day, candidates.day)
          and (
              earlier.start_key < candidates.start_key
              or (
                  earlier.start_key = candidates.start_key
                  and (
                      earlier.length_key > candidates.length_key
                      or (
                          earlier.length_key = candidates.length_key
                          and earlier.span_id < candidates.span_id
                      )
                  )
              )
          )
    )
),

-- What the root's trace says within a day of it, and whether a run_id attribute of its spans
-- names a response line's run.
members as (
    select
        roots.trace_id,
        roots.span_id as root_id,
        min(spans.run_id) as run_id,
        min(spans.test_case_id) as test_case_id,
        count(keys.run_id) > 0 as named_by_line
    from roots
    inner join spans
        on roots.trace_id = spans.trace_id and within_reach(spans.day, roots.day)
    left join keys on spans.run_id = keys.run_id
    group by roots.trace_id, roots.span_id
),

named as (
    select
        roots.*,
        coalesce(roots.run_id, members.run_id, roots.trace_id) as trace_run_id,
        coalesce(roots.test_case_id, members.test_case_id) as trace_test_case_id,
        members.named_by_line
    from roots
    inner join members on roots.trace_id = members.trace_id and roots.span_id = members.root_id
),

-- Two roots that name one run within a day of each other (a retried run whose attempts both
-- carry its run_id): the one that starts last is the run (of those starting together, the
-- greatest trace id, then span_id); the other's spans count toward it through their run_id.
latest as (
    select named.*
    from named
    where not exists (
        select 1 from named as later
        where later.trace_run_id = named.trace_run_id
          and within_reach(later.day, named.day)
          and (
              later.start_key > named.start_key
              or (
                  later.start_key = named.start_key
                  and (
                      later.trace_id > named.trace_id
                      or (later.trace_id = named.trace_id and later.span_id > named.span_id)
                  )
              )
          )
    )
),

-- The roots no response line claims, wherever it lies in the lake (staging.stg_run_keys): by
-- the trace, by the run's id, or by a run_id attribute of the trace's spans within a day of the
-- root (members). One pass over latest (engines that inline a CTE at each use, as Spark does,
-- compute it once).
unclaimed as (
    select latest.*
    from latest
    where
        not coalesce(latest.named_by_line, false)
        and not exists (select 1 from keys where keys.trace_id = latest.trace_id)
        and not exists (select 1 from keys where keys.run_id = latest.trace_run_id)
)

select
    trace_run_id as run_id,
    day,
    coalesce(agent, 'unknown') as agent,
    agent_version,
    cast(null as varchar) as model,
    trace_test_case_id as test_case_id,
    strftime(day, '%Y-%m-%d') as batch_id,
    trace_id,
    cast(null as varchar) as session_id,
    cast(null as bigint) as turn_index,
    cast(null as boolean) as session_done,
    start_time as started_at,
    end_time as ended_at,
    cast(null as varchar) as status,
    cast(null as double) as score,
    cast(null as boolean) as judge_skipped,
    case when status_code = 'ERROR' then coalesce(status_description, '') end as outcome_error,
    cast(null as varchar) as outcome_explanation,
    'lenient' as contract_mode,
    'thin' as trace_mode,
    cast(null as varchar) as final_response,
    cast(null as bigint) as final_response_chars,
    false as final_response_truncated,
    cast(0 as bigint) as n_messages,
    cast(0 as bigint) as n_tool_calls,
    cast(0 as bigint) as n_thinking,
    cast(null as bigint) as input_tokens,
    cast(null as bigint) as output_tokens,
    case when duration_ms >= 0 then duration_ms end as agent_runtime_ms,
    cast(null as varchar) as system_prompt_id,
    'none' as tokens_source,
    'trace' as record_shape,
    source_file,
    source_line,
    coalesce(status_code = 'ERROR', false) as root_failed,
    span_id as root_span_id
from unclaimed
