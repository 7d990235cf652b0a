-- materialized: view
-- Purpose: every test case's history on the latest day against the 7 days before it
-- (`case_history(day, n)` for another window): graded runs and passes on each side,
-- surprise_p (how unlikely the latest night's passes are given the baseline) and flip_rate.
-- Grain: one row per agent, model, test_case_id with a graded run in the window.
create or replace view v_case_history as
select * from case_history(null, 7)
