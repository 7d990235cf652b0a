-- Purpose: every run as read, before the warehouse resolves it from its spans: the response
-- lines that won (staging.stg_runs) and the runs made from traces no response line claims
-- (int_trace_runs), in the columns of the runs lake table.
-- Grain: one row per run (or turn of a multi-turn session).
create or replace view intermediate.int_run_lines as
select * from staging.stg_runs
union all by name
select * exclude (root_failed, root_span_id) from intermediate.int_trace_runs
