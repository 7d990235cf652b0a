-- materialized: macro
-- Purpose: the USD cost of tokens at per-million-token rates (model_prices): input tokens
-- minus the cached ones at the input rate, cached input tokens at the cached rate (the input
-- rate when the table has none), output tokens (reasoning included) at the output rate. Input
-- counts include cached tokens, as runlake's token columns do. Null when neither input nor
-- output tokens are known, or when the rates are (an unknown model); a missing count is 0.
-- Grain: one value per call or run (scalar macro).
create or replace macro token_cost(
    input_tokens, cached_input_tokens, output_tokens, input_rate, cached_input_rate, output_rate
) as
case
    when input_tokens is not null or output_tokens is not null
        then (
            greatest(coalesce(input_tokens, 0) - coalesce(cached_input_tokens, 0), 0)
            * input_rate
            + least(coalesce(cached_input_tokens, 0), coalesce(input_tokens, 0))
            * coalesce(cached_input_rate, input_rate)
            + coalesce(output_tokens, 0) * output_rate
        ) / 1000000.0
end
