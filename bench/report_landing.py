"""The landing folder bench/report.py reports on: nights of many agent x model pairs running
the same test cases, with repeated trials, easy, hard and flaky cases, and the last night's
planted drop, crashes and unrun cases (bench/report.py's docstring says what each holds)."""

import json
import random
import shutil
import sys
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.ingest import OUT  # noqa: E402
from devtools.synth import (  # noqa: E402
    TOOLS_RESEARCH,
    TOOLS_SUPPORT,
    TOOLS_TRAVEL,
    AgentProfile,
    make_run,
    make_spans,
)
from devtools.synth_otlp import to_otlp  # noqa: E402

VERSION = 2
"""Part of the cache key: bump it when the generator's output changes."""

FIRST = date(2026, 11, 13)

# name, tools, nested tool calls, strict contract, thinking, content parts, long answers,
# share of easy cases. The first four are the samples' agents.
AGENTS: list[tuple[str, tuple[str, ...], bool, bool, bool, bool, bool, float]] = [
    ("support-bot", TOOLS_SUPPORT, False, False, True, False, False, 0.82),
    ("travel-agent", TOOLS_TRAVEL, True, False, False, False, False, 0.74),
    ("refund-agent", TOOLS_SUPPORT, False, True, False, False, False, 0.88),
    ("research-agent", TOOLS_RESEARCH, True, False, True, True, True, 0.62),
    ("billing-agent", TOOLS_SUPPORT, True, False, False, False, False, 0.78),
    ("booking-agent", TOOLS_TRAVEL, False, False, True, False, False, 0.70),
    ("docs-agent", TOOLS_RESEARCH, False, False, False, False, False, 0.66),
    ("triage-agent", TOOLS_SUPPORT, True, False, False, False, False, 0.80),
    ("sales-agent", TOOLS_SUPPORT, False, False, True, False, False, 0.72),
    ("itinerary-agent", TOOLS_TRAVEL, True, False, False, False, False, 0.68),
]
# model, change to the share of easy cases (all priced in transforms/data/model_prices.yaml).
MODELS = [("claude-sonnet-4-5", 0.04), ("gpt-4.1", -0.03), ("gpt-4o", 0.0),
          ("gemini-2.5-flash", -0.05), ("gpt-4o-mini", -0.10), ("claude-haiku-4-5", -0.06),
          ("gemini-2.5-pro", 0.02), ("o4-mini", -0.02), ("gpt-5", 0.05),
          ("claude-opus-4-5", 0.06)]
TRIALS = (1, 1, 1, 3)
"""Runs a night of test case c: TRIALS[c % 4] (1.5 on average)."""
EXPLANATIONS = ["The agent acted before the customer confirmed.",
                "The final answer does not state the refund amount.",
                "Wrong reservation cancelled.", "The summary cites no source."]

def shape(pairs: int) -> tuple[int, int]:
    """(agents, models) for `pairs`: the smallest number of agents at least the square root
    that divides it (56 -> 8 x 7, 6 -> 3 x 2)."""
    n = next(a for a in range(1, pairs + 1) if a * a >= pairs and pairs % a == 0)
    if n > len(AGENTS) or pairs // n > len(MODELS):
        raise SystemExit(f"--pairs {pairs} needs {n} agents x {pairs // n} models; at most "
                         f"{len(AGENTS)} agents x {len(MODELS)} models are defined")
    return n, pairs // n


def cases_of(runs_per_pair: int) -> list[int]:
    """The test case of each run slot of a pair's night: case c repeated TRIALS[c % 4] times,
    until the night has its runs (the last case's trials may be cut)."""
    slots: list[int] = []
    c = 0
    while len(slots) < runs_per_pair:
        slots += [c] * TRIALS[c % len(TRIALS)]
        c += 1
    return slots[:runs_per_pair]


def pass_probability(agent: str, model: str, case: int, easy_share: float) -> float:
    """A case's chance to pass on its pair: 8% of cases are flaky (0.5), the others easy
    (0.985) or hard (0.05). Seeded by name, the same every night and every run."""
    u = random.Random(f"{agent}|{model}|{case}").random()
    if u < 0.08:
        return 0.5
    return 0.985 if u < 0.08 + 0.92 * easy_share else 0.05


OTLP_AGENT = "research-agent"
"""The agent whose tracing writes OTLP/JSON, as in the samples; the others write span JSONL."""


def landing(runs_per_night: int, pairs: int, days: int, spans: bool = True,
            seed: int = 26) -> tuple[Path, bool]:
    """The landing folder (a responses file per day and agent, and with `spans` the runs'
    spans beside it, as the samples have them), and whether it was written now. Written once;
    a folder without its `.done` mark (an interrupted generation) is written again."""
    folder = OUT / (f"report-{runs_per_night}r-{pairs}p-{days}d{'' if spans else '-nospans'}"
                    f"-v{VERSION}") / "landing"
    if (folder / ".done").exists():
        return folder, False
    import orjson

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    n_agents, n_models = shape(pairs)
    agents, models = AGENTS[:n_agents], MODELS[:n_models]
    dates = [FIRST + timedelta(days=i) for i in range(days)]
    last = dates[-1]
    # The planted changes on the last night, by (agent index, model index).
    dropped = (1 % n_agents, 2 % n_models)            # travel-agent / gpt-4o by default
    crashed = (3 % n_agents, 0)                         # research-agent / claude-sonnet-4-5
    unrun = (4 % n_agents, 1 % n_models)                # billing-agent / gpt-4.1
    base, extra = divmod(runs_per_night, pairs)
    for day in dates:
        (folder / day.isoformat()).mkdir()
        for a, (name, tools, nested, strict, thinking, parts, long_answers, easy) in \
                enumerate(agents):
            rng = random.Random(f"{seed}|{day}|{name}")
            srng = random.Random(f"{seed}|{day}|{name}|spans")
            lines, span_lines = [], []
            for m, (model, delta) in enumerate(models):
                profile = AgentProfile(name, (model,), tools, nested_calls=nested,
                                       strict=strict, thinking=thinking, parts=parts,
                                       long_answers=long_answers)
                slots = cases_of(base + (a * n_models + m < extra))
                if day == last and (a, m) == unrun:
                    slots = [c for c in slots if c < max(slots) - 1]
                for i, case in enumerate(slots):
                    run = make_run(rng, profile, day, i, case)
                    run["run_id"] = f"{name}-{model}-{day}-{i:05d}"
                    p = pass_probability(name, model, case, easy + delta)
                    if day == last and (a, m) == dropped and p > 0.9:
                        p = 0.5
                    e = rng.random()
                    crash = day == last and (a, m) == crashed and e < 0.35
                    if spans:
                        trace = make_spans(srng, run)
                        if crash:  # the agent died after its first LLM call
                            trace = trace[:2]
                            trace[0]["status"] = {"status_code": "StatusCode.ERROR",
                                                  "description": "exit code 137"}
                        if name == OTLP_AGENT:
                            span_lines.append(orjson.dumps(to_otlp(trace)))
                        elif srng.random() < 0.5:  # one bulk line per run, or a line a span
                            span_lines.append(orjson.dumps({"spans": trace}))
                        else:
                            span_lines += [orjson.dumps(s) for s in trace]
                    if crash:
                        resp = run["response"]
                        resp["messages"] = resp["messages"][:2]
                        resp.pop("final_response", None)
                        run["outcome"] = {"status": "error", "error": "agent process exited "
                                          "with code 137 (out of memory)"}
                    elif e < 0.01:
                        run["outcome"] = {"status": "error",
                                          "error": "agent endpoint timed out after 120 s"}
                    elif e < 0.02:
                        run["outcome"] = {"status": "skipped"}
                    elif rng.random() < p:
                        run["outcome"] = {"status": "passed", "score": 1.0}
                    else:
                        run["outcome"] = {"status": "failed",
                                          "score": round(rng.random() * 0.5, 2),
                                          "explanation": EXPLANATIONS[case % len(EXPLANATIONS)]}
                    lines.append(orjson.dumps(run))
            (folder / day.isoformat() / f"{name}.responses.jsonl").write_bytes(
                b"\n".join(lines) + b"\n")
            if span_lines:
                kind = "otlp" if name == OTLP_AGENT else "spans"
                (folder / day.isoformat() / f"{name}.{kind}.jsonl").write_bytes(
                    b"\n".join(span_lines) + b"\n")
    (folder / ".done").write_text(json.dumps({
        "runs_per_night": runs_per_night, "pairs": pairs, "days": days, "spans": spans,
        "agents": [a[0] for a in agents], "models": [m[0] for m in models],
        "dropped": [agents[dropped[0]][0], models[dropped[1]][0]],
        "crashed": [agents[crashed[0]][0], models[crashed[1]][0]],
        "unrun": [agents[unrun[0]][0], models[unrun[1]][0]]}) + "\n")
    return folder, True
