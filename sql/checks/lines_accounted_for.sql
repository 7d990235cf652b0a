-- Purpose: the line-accounting invariant; every input file's lines are rows, quarantine or blank.
-- Grain: one row per input file that breaks it (the view is empty when all is well).
create or replace view checks.lines_accounted_for as
with files as (
    select source_file, lines, lines_accepted, lines_quarantined, lines_blank
    from ingest_files
),

unaccounted as (
    select
        source_file,
        lines,
        lines_accepted + lines_quarantined + lines_blank as lines_accounted
    from files
)

select source_file, lines, lines_accounted
from unaccounted
where lines <> lines_accounted
