-- materialized: macro
-- Purpose: the runs a comparison leaves out: those of a test case that ran on one side only
-- within its group, and those without a test case. `selection` names a relation as
-- compare_selection makes it (side null for the runs left out).
-- Grain: one row per group (agent, model), test_case_id (null: runs without one) and side.
create or replace macro compare_one_sided(selection) as table
select
    agent,
    model,
    test_case_id,
    case when in_baseline then 'baseline' else 'candidate' end as side,
    count(*) as n_runs,
    count(*) filter (where is_graded(status)) as n_graded,
    count(*) filter (where status = 'passed') as n_passed
from query_table(selection)
where side is null
group by agent, model, test_case_id, case when in_baseline then 'baseline' else 'candidate' end
