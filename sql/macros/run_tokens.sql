-- materialized: macro
-- Purpose: a run's tokens, input plus output: a side not known counts 0 when the other is
-- known; null when neither is.
-- Grain: a scalar macro.
create or replace macro run_tokens(input_tokens, output_tokens) as
    case
        when input_tokens is not null or output_tokens is not null
            then coalesce(input_tokens, 0) + coalesce(output_tokens, 0)
    end
