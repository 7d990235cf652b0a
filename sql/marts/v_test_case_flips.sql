-- materialized: view
-- Purpose: test cases that flipped on the latest day against the 7 days before it
-- (`test_case_flips(day, n)` for another window): pass_to_fail when the case passed in the
-- baseline and failed on the latest day, fail_to_pass the reverse. With repeated trials on the
-- latest day a side passed when at least half its graded runs passed; with one, by each side's
-- last graded run.
-- Grain: one row per agent, model, test_case_id that flipped.
create or replace view v_test_case_flips as
select * from test_case_flips(null, 7)
