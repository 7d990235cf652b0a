-- Purpose: true when a price period of the model_prices table is in force on a day: from its
-- price_from (null: a single price, in force on every day) up to the day before its price_to
-- (the next period's price_from; null: still in force). A model's periods do not overlap, so
-- at most one of its rows is in force on a day; before its first period, none is (no price).
-- Grain: a scalar macro.
create or replace macro price_in_force(day, price_from, price_to) as
    (price_from is null or price_from <= day) and (price_to is null or day < price_to)
