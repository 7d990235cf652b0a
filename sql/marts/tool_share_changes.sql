-- materialized: macro
-- Purpose: how each tool's share of an agent and model's calls moved between a baseline (the
-- baseline_days days before on_day; null arguments: the latest day with runs, 7 days) and on_day.
-- Grain: one row per agent, model, tool_name called on either side.
create or replace macro tool_share_changes(on_day, baseline_days) as table
with bounds as (
    select * from comparison_window(on_day, baseline_days)
),

calls as (
    select
        frequency.agent,
        frequency.model,
        frequency.tool_name,
        frequency.day = bounds.latest_day as on_latest,
        frequency.n_calls
    from v_tool_frequency as frequency
    cross join bounds
    where frequency.day between bounds.baseline_start and bounds.latest_day
),

per_tool as (
    select
        agent,
        model,
        tool_name,
        coalesce(sum(n_calls) filter (where not on_latest), 0) as baseline_calls,
        coalesce(sum(n_calls) filter (where on_latest), 0) as latest_calls
    from calls
    group by agent, model, tool_name
),

shares as (
    select
        per_tool.*,
        baseline_calls / nullif(sum(baseline_calls) over (partition by agent, model), 0)
            as baseline_share,
        latest_calls / nullif(sum(latest_calls) over (partition by agent, model), 0)
            as latest_share
    from per_tool
)

select
    shares.agent,
    shares.model,
    shares.tool_name,
    bounds.latest_day,
    shares.baseline_calls,
    shares.latest_calls,
    shares.baseline_share,
    shares.latest_share,
    shares.latest_share - shares.baseline_share as share_delta
from shares
cross join bounds
