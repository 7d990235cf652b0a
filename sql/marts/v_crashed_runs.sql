-- materialized: view
-- Purpose: every crashed run: status error, on any day, with the error the test platform
-- reported (outcome_error), so that a crash is named by run id whether or not its agent and
-- model's error rate rose significantly.
-- Grain: one row per run with status error.
create or replace view v_crashed_runs as
select
    day,
    run_id,
    agent,
    model,
    test_case_id,
    outcome_error,
    started_at,
    batch_id,
    source_file,
    source_line
from runs
where status = 'error'
