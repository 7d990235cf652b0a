-- materialized: macro
-- Purpose: the canonical model a model name stands for: the name without its provider prefix
-- (everything up to the last '/'), then its exact alias in model_aliases, else the first
-- alias pattern (by position) matching the whole name, else the name itself; null for a null
-- or empty name. The alias table is transforms/data/model_aliases.yaml, extended by
-- RUNLAKE_MODEL_ALIASES.
-- Grain: one value per name (scalar macro).
create or replace macro canonical_model(name) as (
    with stripped as (
        select nullif(trim(regexp_replace(name, '^.*/', '')), '') as s
    )

    select
        coalesce(
            (
                select any_value(exact.model)
                from model_aliases as exact
                where exact.kind = 'exact' and exact.alias = stripped.s
            ),
            (
                select arg_min(
                    regexp_replace(stripped.s, '^(?:' || pattern.alias || ')$', pattern.model),
                    pattern.position
                )
                from model_aliases as pattern
                where pattern.kind = 'pattern' and regexp_full_match(stripped.s, pattern.alias)
            ),
            stripped.s
        )
    from stripped
)
