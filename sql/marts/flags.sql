-- materialized: view
-- stored: flags
-- partition: week
-- Purpose: every finding, once: those raised while reading lines (runs resolved through spans;
-- a tool call or message that later LLM calls' prompts repeat counted once per run, with n_seen
-- its observations), those derived from several tables (see intermediate.int_flags), and the
-- spans whose run lies further than a day away (intermediate.int_span_far_flags).
-- Grain: one row per finding.
create or replace view flags as
select * exclude (run_day) from intermediate.int_flags
union all by name
select * exclude (run_day) from intermediate.int_span_far_flags
