-- Purpose: test cases that flipped on the latest day against the 7 days before it
-- (`test_case_flips(day, n)` for another window): pass_to_fail when the baseline's last graded
-- run passed and the latest day's last graded run failed, fail_to_pass the reverse.
-- Grain: one row per agent, model, test_case_id that flipped.
create or replace view v_test_case_flips as
select * from test_case_flips(null, 7)
