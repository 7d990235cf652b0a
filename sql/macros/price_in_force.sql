-- materialized: macro
-- Purpose: true when a price period of the model_prices table is in force on a day: from its
-- price_from (null: a single price, in force on every day) up to the day before its price_to
-- (the next period's price_from; null: still in force). A model's periods do not overlap, so
-- at most one of its rows is in force on a day; before its first period, none is (no price).
-- Grain: a scalar macro.
-- Written as two comparisons of a day with a bound, so that a join on a model and this macro is
-- a hash join on the model (an OR in a join condition makes DuckDB compare every row with
-- every price). Every lake row has a day; a null day is in no period.
create or replace macro price_in_force(day, price_from, price_to) as
    coalesce(price_from, date '0001-01-01') <= day
    and day < coalesce(price_to, date '9999-12-31')
