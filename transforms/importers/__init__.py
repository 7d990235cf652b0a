"""`runlake import FORMAT SRC... --out DIR`: other tools' result files as runlake landing files.

Each importer reads one source file and returns landing lines (docs/formats.md): response
lines, written to `DIR/<source name>.responses.jsonl`, or for span formats spans, written to
`.spans.jsonl` or `.otlp.jsonl`; the landing folder stays the one input of the pipeline.
Each also says what the source lacks, so a user knows which columns stay empty.

One module per format, each an `Importer` (common.py): its name, a one-line description, how
to recognize its documents and how to convert one; each module's docstring says how the
format maps. `run.py` reads the sources, checks each against the format and writes the
landing files all or nothing; `known.py` holds every importer (KNOWN, IMPORTERS) and
`run_import`.

This package is the registry of the formats: FORMATS below names and describes each, in the
order --help lists them, and loads no importer, so that --help stays fast. To add a format:
name and describe it in FORMATS, write its module, list its IMPORTER in known.KNOWN (where
documents are told apart), and add its golden fixture under tests/fixtures/importers/.
IMPORTERS is made from those two lists.
"""

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
"""The formats `runlake import` reads, by name in the order --help lists them, with what each
source looks like in one line. Each importer takes its description from here."""
