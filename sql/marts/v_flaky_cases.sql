-- materialized: view
-- Purpose: test cases whose graded outcome changed within the baseline (the 7 days before the
-- latest day) or within the latest day. Descriptive only: every case counts in the flips and
-- the tests (v_case_history says how surprising its latest night was).
-- Grain: one row per agent, model, test_case_id that is flaky in that window.
create or replace view v_flaky_cases as
select
    agent,
    model,
    test_case_id,
    latest_day,
    baseline_passes,
    baseline_fails,
    latest_passes,
    latest_fails,
    baseline_status,
    latest_status,
    latest_run_id
from case_outcomes(null, 7)
where is_flaky
