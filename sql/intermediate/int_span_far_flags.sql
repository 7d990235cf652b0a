-- materialized: table
-- stored: _derived/int_span_far_flags
-- partition: none
-- scope: lake
-- Purpose: span_outside_run_window findings: spans whose run exists but lies further than a day
-- from them (a clock off by a year, say), so they count toward no run: the run's tokens, runtime,
-- model and cost come from its line or the price table, not from these spans. The run is the one
-- their run_id attribute names, else the run that shares their trace (the nearest, by day then
-- run_id, when several do and none is within a day). One finding per trace, run looked for and
-- day of such spans (int_span_run_misses), on the earliest of them; n_seen counts the spans.
-- Unlike the other intermediate views it is computed over the whole lake at once, from every
-- week's misses (its `scope: lake`; transforms/warehouse/lake_wide.py): the run can be any
-- distance away.
-- run_day is null: a span out of reach counts toward no run.
-- Grain: one row per finding, in the columns of intermediate.int_flags.
create or replace view intermediate.int_span_far_flags as
with codes as (
    select code, severity, category from flag_codes
),

misses as (
    select * from intermediate.int_span_run_misses
),

runs as (
    select run_id, trace_id, day from intermediate.int_run_lines
),

named as (
    select
        misses.*,
        runs.run_id as found_run_id,
        runs.day as found_run_day,
        1 as n_runs
    from misses
    inner join runs on misses.run_id = runs.run_id
    where not within_reach(runs.day, misses.day)
),

trace_runs as (
    select
        misses.*,
        runs.run_id as found_run_id,
        runs.day as found_run_day,
        count(*) over sharing as n_runs,
        sum(case when within_reach(runs.day, misses.day) then 1 else 0 end) over sharing
            as n_runs_near,
        row_number() over (
            sharing
            order by abs(date_diff('day', runs.day, misses.day)) asc, runs.run_id asc
        ) as nearness
    from misses
    inner join runs on misses.trace_id = runs.trace_id
    where misses.run_id is null
    window sharing as (partition by misses.trace_id, misses.day)
),

shared as (
    select * exclude (n_runs_near, nearness)
    from trace_runs
    where nearness = 1 and n_runs_near = 0
),

looked_up as (
    select * from named
    union all
    select * from shared
),

found as (
    select
        trace_id,
        run_id as named_run_id,
        day,
        n_spans,
        first_span_id,
        source_file,
        source_line,
        found_run_id,
        found_run_day,
        n_runs,
        date_diff('day', found_run_day, day) as offset_days
    from looked_up
),

findings as (
    select
        'span' as entity,
        found_run_id as run_id,
        day,
        first_span_id as span_id,
        'span_outside_run_window' as code,
        case
            when named_run_id is not null then printf('span %s', first_span_id)
            else printf('span %s of trace %s', first_span_id, trace_id)
        end
        || printf(
            ' starts %d days %s', abs(offset_days),
            case when offset_days > 0 then 'after' else 'before' end
        )
        || case
            when named_run_id is not null
                then printf(' its run %s''s day %s', found_run_id, found_run_day::varchar)
            when n_runs = 1
                then printf(
                    ' the day %s of run %s, the trace''s run', found_run_day::varchar, found_run_id
                )
            else printf(
                ' the day %s of run %s, the nearest of the trace''s %d runs',
                found_run_day::varchar, found_run_id, n_runs
            )
        end
        || case
            when n_spans = 1 then ''
            when n_spans = 2 and named_run_id is not null
                then printf('; so does the other span of trace %s that day', trace_id)
            when n_spans = 2 then '; so does its other span that day'
            when named_run_id is not null
                then printf(
                    '; so do the %d other spans of trace %s that day', n_spans - 1, trace_id
                )
            else printf('; so do its %d other spans that day', n_spans - 1)
        end
        || ': further than a day from its run, a span counts toward no run' as detail,
        n_spans as n_seen,
        source_file,
        source_line
    from found
)

select
    findings.entity,
    findings.run_id,
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
    findings.source_line,
    null::date as run_day,
    findings.n_seen::bigint as n_seen
from findings
inner join codes on findings.code = codes.code
