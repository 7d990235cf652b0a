-- materialized: macro
-- Purpose: what a score's label says of the run: 'pass' for pass, passed, true or correct,
-- 'fail' for fail, failed, false or incorrect (any case, spaces around ignored), else null (a
-- label that grades nothing, or none). The one list: a run made from a trace is passed when every
-- evaluation with a verdict passed, failed when any failed (int_runs).
-- Grain: a scalar macro over a label.
create or replace macro score_verdict(label) as
    case
        when lower(trim(label)) in ('pass', 'passed', 'true', 'correct') then 'pass'
        when lower(trim(label)) in ('fail', 'failed', 'false', 'incorrect') then 'fail'
    end
