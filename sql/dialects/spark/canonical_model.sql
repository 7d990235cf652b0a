-- Purpose: canonical_model (sql/macros/canonical_model.sql) for Spark, and for Trino translated
-- from this Spark SQL: the same rule, with the stripped name spelled out where DuckDB names it
-- in a CTE (Spark lifts CTEs out of a correlated subquery) and the first matching pattern
-- chosen before it is applied (Spark aggregates no expression mixing the outer name and the
-- alias rows). Patterns are anchored Java regexes; replacements name groups $1.
-- Grain: a scalar function over a model name.
create function canonical_model(name string) returns string return coalesce(  -- noqa: LT01
    (
        select any_value(exact.model)
        from model_aliases as exact
        where exact.kind = 'exact'
            and exact.alias = nullif(trim(regexp_replace(name, '^.*/', '')), '')
    ),
    regexp_replace(
        nullif(trim(regexp_replace(name, '^.*/', '')), ''),
        concat('^(?:', (
            select min_by(pattern.alias, pattern.position)
            from model_aliases as pattern
            where pattern.kind = 'pattern'
                and nullif(trim(regexp_replace(name, '^.*/', '')), '')
                rlike concat('^(?:', pattern.alias, ')$')
        ), ')$'),
        (
            select min_by(pattern.model, pattern.position)
            from model_aliases as pattern
            where pattern.kind = 'pattern'
                and nullif(trim(regexp_replace(name, '^.*/', '')), '')
                rlike concat('^(?:', pattern.alias, ')$')
        )
    ),
    nullif(trim(regexp_replace(name, '^.*/', '')), '')
)
