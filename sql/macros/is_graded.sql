-- materialized: macro
-- Purpose: the one list of graded statuses: a run whose outcome counts toward a pass rate
-- (passed, failed, or a contract violation, which counts as a failure). error, skipped and
-- ungraded runs are not graded. Change it here and every view follows.
-- Grain: a scalar macro over a run's status.
create or replace macro is_graded(status) as status in ('passed', 'failed', 'contract_violation')
