-- materialized: view
-- Purpose: the messages as read (stg_messages_lines), without the lines that lost to a later line
-- with their run_id and the rows read from a copy of a span that lost.
-- Grain: one row per row of stg_messages_lines kept.
create or replace view staging.stg_messages as
select * from staging.stg_messages_lines as r
where not lost_line(r.run_id, r.source_file, r.source_line)
    and not lost_span_copy(r.span_id, r.source_file, r.source_line)
