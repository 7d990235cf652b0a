-- materialized: window_table
-- Purpose: the spans as read, one copy of each (the copy read last), with how many times it was
-- delivered.
-- Grain: one row per span.
create or replace view staging.stg_spans as
select r.*, coalesce(c.deliveries, 1) as deliveries
from staging.stg_spans_lines as r
left join staging.stg_span_copies as c
    on
        r.source_file = c.source_file
        and r.source_line = c.source_line
        and r.span_index = c.span_index
where coalesce(c.copy_rank, 1) = 1
