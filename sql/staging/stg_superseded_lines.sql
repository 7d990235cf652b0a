-- materialized: table
-- stored: _derived/superseded_lines
-- partition: none
-- scope: lake
-- Purpose: the lines whose run_id a later line (by source file path, then line number) also
-- carries: the later line wins; the earlier lines' rows stay in lake/_lines/ and are left out of
-- the views. Computed over the whole lake (one narrow scan of the runs as read) and stored by
-- each lake version.
-- Grain: one row per losing line.
create or replace view staging.stg_superseded_lines as
select run_id, day, source_file, source_line, win_day, win_file, win_line
from (
    select
        run_id,
        day,
        source_file,
        source_line,
        first_value(day) over w as win_day,
        first_value(source_file) over w as win_file,
        first_value(source_line) over w as win_line,
        row_number() over w as rank_
    from staging.stg_runs_lines
    window w as (partition by run_id order by source_file desc, source_line desc)
) as ranked
where ranked.rank_ > 1
