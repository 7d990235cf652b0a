-- materialized: view
-- Purpose: multi-turn sessions: their turns (runs with a session_id), whether a turn said the
-- session is done, tokens and runtime summed over the turns, and the outcome of the last turn
-- (by turn_index, then start time), where the outcome of a session usually sits.
-- Grain: one row per agent and session_id.
create or replace view sessions as
with turns as (
    select * from v_runs where session_id is not null
)

select
    agent,
    session_id,
    min(day) as day,
    arg_max(model, (coalesce(turn_index, -1), started_at, run_id)) as model,
    count(*) as n_turns,
    min(turn_index) as first_turn_index,
    max(turn_index) as last_turn_index,
    coalesce(bool_or(session_done), false) as is_done,
    min(started_at) as started_at,
    max(ended_at) as ended_at,
    sum(input_tokens) as input_tokens,
    sum(output_tokens) as output_tokens,
    sum(agent_runtime_ms) as agent_runtime_ms,
    arg_max(status, (coalesce(turn_index, -1), started_at, run_id)) as last_status,
    arg_max(run_id, (coalesce(turn_index, -1), started_at, run_id)) as last_run_id,
    count(*) filter (where status = 'contract_violation') as n_contract_violations,
    sum(n_flags) as n_flags
from turns
group by agent, session_id
