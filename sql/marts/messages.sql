-- materialized: view
-- stored: messages
-- partition: week
-- Purpose: the messages table, with the run of rows that came from a span's LLM call resolved
-- through the span (with_span_run).
-- Grain: one row per message.
create or replace view messages as
select * from with_span_run('staging.stg_messages')
