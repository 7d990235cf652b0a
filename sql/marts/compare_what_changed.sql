-- materialized: macro
-- Purpose: what changed between the two sides of a comparison, case by case, beside the cases
-- that flipped. `selection` names a relation with one row per run: run_id, agent, model (the
-- group; either may be null for every row), side ('baseline' or 'candidate'; null takes no
-- side) and test_case_id. The fields: the runs' agent_version, system_prompt_id, model_raw and
-- response_model, and each metadata_kv key (field `metadata.<key>`, a string value without its
-- JSON quotes). For each test case that ran on both sides (runs of any status), a field shows a
-- change when all the case's baseline runs share one value (before; a missing value or key is
-- null) and all its candidate runs share another (after). A field that varies within a side of
-- a case (a build id, a git sha, a seed) shows no change for that case. n_flipped_cases and
-- n_pass_to_fail count the cases showing the change that flipped (compare_cases' direction).
-- Grain: one row per agent, model, field, before and after shown by at least one case.
create or replace macro compare_what_changed(selection) as table
with sides_ as (
    select
        run_id,
        agent,
        model,
        test_case_id,
        side = 'candidate' as on_candidate
    from query_table(selection)
    where side in ('baseline', 'candidate') and test_case_id is not null
),

case_runs as (
    select
        agent,
        model,
        test_case_id,
        count(*) filter (where not on_candidate) as n_baseline,
        count(*) filter (where on_candidate) as n_candidate
    from sides_
    group by agent, model, test_case_id
    having
        count(*) filter (where not on_candidate) > 0
        and count(*) filter (where on_candidate) > 0
),

-- The chosen runs' fields, read once; their days bound the metadata read (a join on run_id
-- and day lets the scan skip what lies outside them, however long the history).
chosen_runs as (
    select
        runs.run_id,
        runs.day,
        runs.agent_version,
        runs.system_prompt_id,
        runs.model_raw,
        runs.response_model
    from runs
    inner join sides_ on runs.run_id = sides_.run_id
),

run_fields as (
    select run_id, 'agent_version' as field, agent_version as value from chosen_runs
    union all
    select run_id, 'system_prompt_id' as field, system_prompt_id as value from chosen_runs
    union all
    select run_id, 'model_raw' as field, model_raw as value from chosen_runs
    union all
    select run_id, 'response_model' as field, response_model as value from chosen_runs
    union all
    select
        metadata_kv.run_id,
        'metadata.' || metadata_kv.key as field,
        case
            when metadata_kv.value like '"%' then json_extract_string(metadata_kv.value, '$')
            else metadata_kv.value
        end as value
    from metadata_kv
    inner join chosen_runs
        on metadata_kv.run_id = chosen_runs.run_id and metadata_kv.day = chosen_runs.day
),

values_ as (
    select
        sides_.agent,
        sides_.model,
        sides_.test_case_id,
        run_fields.field,
        count(run_fields.value) filter (where not sides_.on_candidate) as n_baseline_values,
        min(run_fields.value) filter (where not sides_.on_candidate) as baseline_least,
        max(run_fields.value) filter (where not sides_.on_candidate) as baseline_most,
        count(run_fields.value) filter (where sides_.on_candidate) as n_candidate_values,
        min(run_fields.value) filter (where sides_.on_candidate) as candidate_least,
        max(run_fields.value) filter (where sides_.on_candidate) as candidate_most
    from sides_
    inner join run_fields on sides_.run_id = run_fields.run_id
    group by sides_.agent, sides_.model, sides_.test_case_id, run_fields.field
),

-- A side shares one value when no run has the field (null) or every run has the same one.
shared as (
    select
        values_.agent,
        values_.model,
        values_.test_case_id,
        values_.field,
        values_.baseline_least as before,
        values_.candidate_least as after
    from values_
    inner join case_runs
        on
            values_.agent is not distinct from case_runs.agent
            and values_.model is not distinct from case_runs.model
            and values_.test_case_id = case_runs.test_case_id
    where
        (
            values_.n_baseline_values = 0
            or (
                values_.n_baseline_values = case_runs.n_baseline
                and values_.baseline_least = values_.baseline_most
            )
        )
        and (
            values_.n_candidate_values = 0
            or (
                values_.n_candidate_values = case_runs.n_candidate
                and values_.candidate_least = values_.candidate_most
            )
        )
        and values_.baseline_least is distinct from values_.candidate_least
),

flipped as (
    select agent, model, test_case_id, direction
    from compare_cases(selection)
    where direction is not null
)

select
    shared.agent,
    shared.model,
    shared.field,
    shared.before,
    shared.after,
    count(*) as n_cases,
    count(flipped.direction) as n_flipped_cases,
    count(*) filter (where flipped.direction = 'pass_to_fail') as n_pass_to_fail
from shared
left join flipped
    on
        shared.agent is not distinct from flipped.agent
        and shared.model is not distinct from flipped.model
        and shared.test_case_id = flipped.test_case_id
group by shared.agent, shared.model, shared.field, shared.before, shared.after
