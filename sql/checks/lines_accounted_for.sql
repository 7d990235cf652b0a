-- materialized: view
-- Purpose: the line-accounting invariant: every input file's lines are rows, quarantine or
-- blank, and the lake holds them: a quarantine row per quarantined line, and for a responses
-- file a runs row (current or superseded) per accepted line.
-- Grain: one row per input file that breaks it (the view is empty when all is well).
create or replace view checks.lines_accounted_for as
with files as (
    select source_file, kind, lines, lines_accepted, lines_quarantined, lines_blank
    from staging.stg_ingest_files
),

quarantined as (
    select source_file, count(*) as n
    from staging.stg_quarantine
    group by source_file
),

run_lines as (
    select source_file from staging.stg_runs
    union all
    select source_file from staging.stg_superseded_runs
),

run_rows as (
    select source_file, count(*) as n
    from run_lines
    group by source_file
),

compared as (
    select
        files.source_file,
        files.lines,
        files.lines_accepted + files.lines_quarantined + files.lines_blank as lines_accounted,
        files.lines_quarantined,
        coalesce(quarantined.n, 0) as quarantine_rows,
        files.lines_accepted,
        case when files.kind in ('responses', 'durable') then coalesce(run_rows.n, 0) end
            as run_rows
    from files
    left join quarantined on files.source_file = quarantined.source_file
    left join run_rows on files.source_file = run_rows.source_file
)

select *
from compared
where
    lines <> lines_accounted
    or lines_quarantined <> quarantine_rows
    or (run_rows is not null and run_rows <> lines_accepted)
