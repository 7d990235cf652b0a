-- materialized: view
-- Purpose: what changed between the latest day's runs and the 7 days before them
-- (`what_changed(day, n)` for another window), per agent and model: a row per field
-- (agent_version, system_prompt_id, model_raw, response_model, `metadata.<key>`), value before
-- and value after, with the test cases whose baseline runs all shared the one and whose latest
-- runs all share the other (n_cases), and how many of them flipped (n_flipped_cases) or went
-- from pass to fail (n_pass_to_fail). A field that varies within a case's baseline shows no
-- change for it.
-- Grain: one row per agent, model, field, before and after shown by at least one case.
create or replace view v_what_changed as
select * from what_changed(null, 7)
