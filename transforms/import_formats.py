"""The formats `runlake import` reads, by name in the order --help lists them, with what each
source looks like in one line. Each importer takes its description from here, so that --help
names them all without loading the importers."""

FORMATS: dict[str, str] = {
    "tau-bench": "tau-bench trajectories, a JSON array of {task_id, trial, reward, info, traj}",
    "tau2": "tau2-bench results, {info, tasks, simulations}",
    "inspect": "Inspect AI eval logs, .eval (zip) or .json {eval, samples}, or a folder of them",
    "langfuse": "Langfuse trace exports, {trace, observations}",
    "otlp": "OpenTelemetry spans in one JSON document (a collector export {resourceSpans}, an "
            "array of spans, or one span)",
    "agentops": "AgentOps trace exports, {trace, spans} with nested span_attributes",
    "swe-agent": "SWE-agent trajectories (.traj), {trajectory, history, info, replay_config}",
    "openhands": "OpenHands event lists, a JSON array of {source, action or observation} "
                 "events",
}
