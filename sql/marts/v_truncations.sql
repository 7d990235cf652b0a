-- materialized: view
-- Purpose: every truncation finding with the layer that cut and the sizes involved:
-- platform (final_response over 50,000 characters), model (output_tokens at max_tokens),
-- provider (a partial response), error_log (error_message at its 1,024-character limit).
-- Grain: one row per truncation finding.
create or replace view v_truncations as
with findings as (
    select * from flags where category = 'truncation'
),

runs_ as (
    select run_id, day, agent, model, final_response_chars from runs
),

calls as (
    select
        source_file,
        source_line,
        span_id,
        agent,
        canonical_model as model,
        output_tokens,
        max_tokens,
        error_message_chars
    from llm_calls
)

select
    findings.entity,
    findings.run_id,
    findings.span_id,
    findings.day,
    coalesce(runs_.agent, calls.agent, 'unknown') as agent,
    coalesce(runs_.model, calls.model, 'unknown') as model,
    findings.code,
    case findings.code
        when 'final_response_truncated' then 'platform'
        when 'llm_output_truncated' then 'model'
        when 'llm_partial_response' then 'provider'
        when 'llm_error_message_truncated' then 'error_log'
    end as truncated_by,
    case when findings.code = 'final_response_truncated' then runs_.final_response_chars
    end as final_response_chars,
    case when findings.code = 'final_response_truncated' then 50000 end as limit_chars,
    calls.output_tokens,
    calls.max_tokens,
    case when findings.code = 'llm_error_message_truncated' then calls.error_message_chars
    end as error_message_chars,
    findings.detail
from findings
left join runs_ on findings.run_id = runs_.run_id
left join calls
    on
        findings.source_file = calls.source_file
        and findings.source_line = calls.source_line
        and findings.span_id = calls.span_id
