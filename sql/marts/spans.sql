-- materialized: view
-- stored: spans
-- partition: week
-- Purpose: the spans table, each row with its run: the span's run_id attribute, else its trace's,
-- else the one run sharing its trace_id (linked_by says which: int_span_runs); agent resolved
-- over the whole trace (int_span_agents: its own attribute, else its nearest invoke_agent
-- ancestor's, else service.name).
-- Grain: one row per span.
create or replace view spans as
with rows_ as (
    select * from staging.stg_spans
),

span_runs as (
    select source_file, source_line, span_id, run_id, linked_by
    from intermediate.int_span_runs
),

span_agents as (
    select source_file, source_line, span_id, agent
    from intermediate.int_span_agents
)

select
    rows_.* replace (span_runs.run_id as run_id, span_agents.agent as agent),
    span_runs.linked_by
from rows_
left join span_runs
    on
        rows_.source_file = span_runs.source_file
        and rows_.source_line = span_runs.source_line
        and rows_.span_id = span_runs.span_id
left join span_agents
    on
        rows_.source_file = span_agents.source_file
        and rows_.source_line = span_agents.source_line
        and rows_.span_id = span_agents.span_id
