-- materialized: macro
-- Purpose: the rows of a lake table (named as a string) with the run of rows that came from a
-- span's LLM call resolved through the span (int_span_runs: its run_id attribute, else its
-- trace's one run within a day); rows that name their run keep it. The one rule the messages,
-- tool_calls and thinking views apply.
-- Grain: a table macro: one row per row of the table it is given.
create or replace macro with_span_run(table_name) as table
select rows_.* replace (coalesce(rows_.run_id, span_runs.run_id) as run_id)
from query_table(table_name) as rows_
-- Every condition an equality, so that the join is a hash join: a row that names its run
-- joins nothing (its key is null), whatever the size of the night.
left join intermediate.int_span_runs as span_runs
    on
        rows_.source_file = span_runs.source_file
        and rows_.source_line = span_runs.source_line
        and span_runs.span_id = case when rows_.run_id is null then rows_.span_id end
