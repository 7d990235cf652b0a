-- materialized: view
-- Purpose: the reasoning blocks as read (stg_thinking_lines), without the lines that lost to a
-- later line with their run_id and the rows read from a copy of a span that lost.
-- Grain: one row per row of stg_thinking_lines kept.
create or replace view staging.stg_thinking as
select * from staging.stg_thinking_lines as r
where
    not exists (
        select 1 from staging.stg_superseded_lines as l
        where
            l.run_id = r.run_id
            and l.source_file = r.source_file
            and l.source_line = r.source_line
    )
    and (
        r.span_id is null or not exists (
            select 1 from staging.stg_superseded_spans as s
            where
                s.span_id = r.span_id
                and s.source_file = r.source_file
                and s.source_line = r.source_line
        )
    )
