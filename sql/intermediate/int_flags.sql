-- materialized: table
-- stored: _derived/int_flags
-- partition: week
-- Purpose: every finding once, stored once per commit: the flags raised while reading lines,
-- with their runs resolved through spans, and those derived from several tables. The lake keeps
-- every observation; here the observations of one finding key (a tool call or a message that
-- later LLM calls' prompts repeat) within one scope (finding_scope: the run, else the trace)
-- and code are one row: the run's own transcript when it saw it, else the first observation by
-- file, line and span. A finding counts toward its run (run_day, the run's day) when it is
-- within a day of the run; others (spans linked to no run, or to a run further away) are one
-- row per trace (or run), code, key and day. n_seen counts the observations. Rows of a lake
-- written before flags.source existed get their source from span_id.
-- Grain: one row per finding.
create or replace view intermediate.int_flags as
with span_runs as (
    select source_file, source_line, span_id, trace_id, run_id
    from intermediate.int_span_runs
),

read_flags as (
    select
        read_flags.* replace (
            coalesce(read_flags.run_id, span_runs.run_id) as run_id,
            coalesce(
                read_flags.source,
                case when read_flags.span_id is null then 'response' else 'span' end
            ) as source
        ),
        finding_scope(
            coalesce(read_flags.run_id, span_runs.run_id),
            span_runs.trace_id,
            read_flags.finding_key
        ) as finding_scope
    from staging.stg_flags as read_flags
    -- Equalities only, so that the join is a hash join (with_span_run): a flag that names its
    -- run joins nothing (its key is null).
    left join span_runs
        on
            read_flags.source_file = span_runs.source_file
            and read_flags.source_line = span_runs.source_line
            and span_runs.span_id
            = case when read_flags.run_id is null then read_flags.span_id end
),

runs as (
    select run_id, day from intermediate.int_run_lines
),

located as (
    select read_flags.*, runs.day as run_day
    from read_flags
    left join runs
        on read_flags.run_id = runs.run_id and within_reach(runs.day, read_flags.day)
),

single as (
    select * exclude (finding_scope), 1::bigint as n_seen
    from located
    where finding_scope is null
),

keyed as (
    select
        * exclude (finding_scope),
        count(*) over finding as n_seen,
        row_number() over (
            finding
            order by source = 'response' desc, source_file asc, source_line asc,
                     span_id asc nulls first, message_index asc, call_index asc, detail asc
        ) as observation
    from located
    where finding_scope is not null
    window finding as (
        partition by finding_scope, code, finding_key, case when run_day is null then day end
    )
)

select * from single
union all by name
select * exclude (observation) from keyed where observation = 1
union all by name
select *, 1::bigint as n_seen from intermediate.int_derived_flags
