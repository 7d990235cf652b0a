-- materialized: table
-- stored: _derived/int_span_agents
-- partition: week
-- Purpose: the agent of each span, resolved over its whole trace: its own agent.name or
-- gen_ai.agent.name attribute, else the gen_ai.agent.name of its nearest invoke_agent ancestor
-- (the GenAI conventions put the name on that span only), else its resource's service.name. An
-- OTel SDK exports a trace in several batches, children often before their parent, so the
-- ancestor may lie in another line, file or ingest than the span: the walk up the parents is
-- made here, over every span of the trace in the lake, not when a line is read. A span whose
-- stored agent is neither null nor its service.name already has its own (or an ancestor's from
-- its line) and keeps it; the walk starts once per trace and parent, stops at the first
-- invoke_agent span naming an agent, at a parent missing from the lake, or after 256 steps
-- (a parent cycle). A span stored twice is one node: its smallest parent_id and agent name.
-- Grain: one row per span line and span_id (source_file, source_line, span_id).
create or replace view intermediate.int_span_agents as
with recursive spans as (
    select
        trace_id,
        span_id,
        parent_id,
        agent,
        operation,
        source_file,
        source_line,
        case
            when agent is null or agent = service_name or operation = 'invoke_agent'
                then coalesce(
                    nullif(json_extract_string(attributes, '$."agent.name"'), ''),
                    nullif(json_extract_string(attributes, '$."gen_ai.agent.name"'), '')
                )
        end as own_agent,
        (agent is null or agent = service_name) as may_inherit
    from staging.stg_spans
),

nodes as (
    select
        trace_id,
        span_id,
        min(parent_id) as parent_id,
        min(case when operation = 'invoke_agent' then own_agent end) as passes
    from spans
    group by trace_id, span_id
),

starts as (
    select distinct trace_id, parent_id
    from spans
    where may_inherit and own_agent is null and parent_id is not null
),

walk (trace_id, start_id, at_id, found, depth) as (
    select
        trace_id,
        parent_id as start_id,
        parent_id as at_id,
        cast(null as varchar) as found,
        0 as depth
    from starts
    union all
    select
        walk.trace_id,
        walk.start_id,
        nodes.parent_id,
        nodes.passes,
        walk.depth + 1
    from walk
    inner join nodes on walk.trace_id = nodes.trace_id and walk.at_id = nodes.span_id
    where walk.found is null and walk.depth < 256
),

inherited as (
    select trace_id, start_id, min(found) as agent
    from walk
    where found is not null
    group by trace_id, start_id
)

select
    spans.source_file,
    spans.source_line,
    spans.span_id,
    min(
        case
            when spans.may_inherit and spans.own_agent is null
                then coalesce(inherited.agent, spans.agent)
            else spans.agent
        end
    ) as agent
from spans
left join inherited
    on
        spans.trace_id = inherited.trace_id
        and spans.parent_id = inherited.start_id
group by spans.source_file, spans.source_line, spans.span_id
