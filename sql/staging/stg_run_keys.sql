-- materialized: view
-- scope: lake
-- Purpose: the run_id and trace_id of every response line read (those that lost to a later line
-- with their run_id too: a retried run's first attempt is no run of its own either): a trace any
-- of them names, however far away, is no run of its own (int_trace_runs). A derive computes it
-- over the whole lake once (one narrow scan of the runs), and each window of days reads it.
-- Grain: one row per run_id and trace_id.
create or replace view staging.stg_run_keys as
select distinct run_id, trace_id from staging.stg_runs_lines
