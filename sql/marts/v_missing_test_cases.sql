-- materialized: view
-- Purpose: test cases that ran on at least half of the baseline days (the 7 days before the
-- latest day, counting the days on which the agent and model ran at all) and not at all on the
-- latest day, whole missing agent-and-model pairs included (`missing_test_cases(day, n)` for
-- another window).
-- Grain: one row per agent, model and test_case_id.
create or replace view v_missing_test_cases as
select * from missing_test_cases(null, 7)
