-- materialized: window_table
-- Purpose: the span copies that lost, by (source_file, source_line, span_id): the rows read from
-- them (an LLM call's messages, tool calls, reasoning blocks and findings) are left out of the
-- views. A key that a winning copy shares (two traces' spans of one id in one line) is kept:
-- those rows cannot be told apart by trace, and no winner's row is left out.
-- Grain: one row per losing copy's line and span_id.
create or replace view staging.stg_superseded_spans as
select source_file, source_line, span_id from staging.stg_span_copies where copy_rank > 1
except
select source_file, source_line, span_id from staging.stg_span_copies where copy_rank = 1
