-- materialized: view
-- Purpose: runs that broke their response contract at error severity, with the first such
-- code (alphabetically), its detail, and every code the run broke.
-- Grain: one row per run with an error-severity contract finding.
create or replace view v_contract_violations as
with findings as (
    select run_id, code, detail
    from flags
    where category = 'contract' and severity = 'error' and run_id is not null
),

runs_ as (
    select run_id, day, agent, model from runs
),

per_run as (
    select
        run_id,
        min(code) as code,
        arg_min(detail, code) as detail,
        list(distinct code order by code) as codes
    from findings
    group by run_id
)

select
    per_run.run_id,
    runs_.day,
    runs_.agent,
    runs_.model,
    per_run.code,
    per_run.detail,
    per_run.codes
from per_run
inner join runs_ on per_run.run_id = runs_.run_id
