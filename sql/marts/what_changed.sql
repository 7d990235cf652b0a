-- materialized: macro
-- Purpose: what changed between each agent and model's baseline (the baseline_days days before
-- on_day; null arguments: the latest day with runs, 7 days) and on_day, beside the cases that
-- flipped: compare_what_changed over the window's runs with a test case (any status), on_day the
-- candidate side. The fields agent_version, system_prompt_id, model_raw, response_model and
-- every metadata_kv key (`metadata.<key>`); a case shows a change when all its baseline-window
-- runs share one value (before) and all its on_day runs share another (after), so a field that
-- varies within a case's baseline (a build id, a git sha) shows none. n_pass_to_fail: how many
-- of the cases showing it went from pass to fail (test_case_flips).
-- Grain: one row per agent, model, field, before and after shown by at least one case.
create or replace macro what_changed(on_day, baseline_days) as table
with window_sides as (  -- noqa: ST03
    select * from window_runs(on_day, baseline_days)
)

select
    window_.latest_day,
    changes.agent,
    changes.model,
    changes.field,
    changes.before,
    changes.after,
    changes.n_cases,
    changes.n_flipped_cases,
    changes.n_pass_to_fail,
    window_.baseline_start,
    window_.baseline_end
from compare_what_changed('window_sides') as changes
cross join comparison_window(on_day, baseline_days) as window_
