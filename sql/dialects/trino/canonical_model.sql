-- Purpose: canonical_model (sql/macros/canonical_model.sql) in Trino SQL: the same rule, with
-- the stripped name spelled out where DuckDB names it in a CTE and the first matching pattern
-- chosen before it is applied, as in the Spark version. Patterns are anchored Java regexes;
-- replacements name groups $1.
-- Grain: a scalar function over a model name.
create function canonical_model(name varchar) returns varchar return coalesce(
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
                and regexp_like(
                    nullif(trim(regexp_replace(name, '^.*/', '')), ''),
                    concat('^(?:', pattern.alias, ')$')
                )
        ), ')$'),
        (
            select min_by(pattern.model, pattern.position)
            from model_aliases as pattern
            where pattern.kind = 'pattern'
                and regexp_like(
                    nullif(trim(regexp_replace(name, '^.*/', '')), ''),
                    concat('^(?:', pattern.alias, ')$')
                )
        )
    ),
    nullif(trim(regexp_replace(name, '^.*/', '')), '')
)
