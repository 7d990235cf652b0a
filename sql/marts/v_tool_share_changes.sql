-- materialized: view
-- Purpose: the tools whose share of each agent and model's calls moved between the 7 days
-- before the latest day and the latest day (`tool_share_changes(day, n)` for another window).
-- Grain: one row per agent, model, tool_name called on either side.
create or replace view v_tool_share_changes as
select * from tool_share_changes(null, 7)
