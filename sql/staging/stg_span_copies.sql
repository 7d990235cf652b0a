-- materialized: window_table
-- Purpose: every staged copy of a span (its trace_id and span_id): an exporter delivers at least
-- once, so a span can be read twice (a retried request, the same span in two files). The copy
-- read last (by source file path, then line, then position in its line) wins (copy_rank 1), as
-- for a repeated run_id; deliveries counts the copies. The copies of a span share its start time
-- and so its day: a derive's window of days holds them all.
-- Grain: one row per span copy.
create or replace view staging.stg_span_copies as
select
    trace_id,
    span_id,
    source_file,
    source_line,
    span_index,
    row_number() over w as copy_rank,
    count(*) over (partition by trace_id, span_id) as deliveries
from staging.stg_spans_lines
where trace_id is not null and span_id is not null
window w as (
    partition by trace_id, span_id
    order by source_file desc, source_line desc, span_index desc
)
