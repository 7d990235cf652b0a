-- materialized: view
-- Purpose: the scores as read (stg_scores_lines), without the lines that lost to a later line with
-- their run_id and the copies of a span that lost.
-- Grain: one row per row of stg_scores_lines kept.
create or replace view staging.stg_scores as
select * from staging.stg_scores_lines as r
where
    not exists (
        select 1 from staging.stg_superseded_lines as l
        where
            l.run_id = r.run_id
            and l.source_file = r.source_file
            and l.source_line = r.source_line
    )
    and not exists (
        select 1 from staging.stg_superseded_calls as s
        where
            s.span_id = r.span_id
            and s.trace_id = r.trace_id
            and s.source_file = r.source_file
            and s.source_line = r.source_line
    )
