-- materialized: macro
-- Purpose: true when two days are at most one day apart: how far a link between records reaches
-- across midnight (a span to its run, an LLM call or a span's finding to its run, a span to its
-- parent). Records further apart are not linked, so what the views derive for a day depends on
-- that day and its neighbours only, whatever else the lake holds.
-- Grain: a scalar macro.
create or replace macro within_reach(a, b) as
    a between b - 1 and b + 1
