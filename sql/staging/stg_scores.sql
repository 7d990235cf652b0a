-- materialized: view
-- Purpose: the scores as read (stg_scores_lines), without the lines that lost to a later line with
-- their run_id and the copies of a span that lost.
-- Grain: one row per row of stg_scores_lines kept.
create or replace view staging.stg_scores as
select * from staging.stg_scores_lines as r
where not lost_line(r.run_id, r.source_file, r.source_line)
    and not lost_call(r.span_id, r.trace_id, r.source_file, r.source_line)
