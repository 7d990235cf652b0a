-- materialized: table
-- stored: _derived/int_model_names
-- partition: week
-- Purpose: every model name the lake holds (runs' lines and LLM calls, exactly as the sources
-- wrote them) with its canonical model (canonical_model(): provider prefix removed, dated
-- snapshots mapped to their family by the alias table), so that views group one model once.
-- Grain: one row per distinct model name.
create or replace view intermediate.int_model_names as
with names as (
    select model as model_raw from staging.stg_runs where model is not null
    union
    select model as model_raw from staging.stg_llm_calls where model is not null
)

select
    model_raw,
    canonical_model(model_raw) as model
from names
