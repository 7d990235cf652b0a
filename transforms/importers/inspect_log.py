"""`inspect`: an Inspect AI eval log, `.eval` (the zip Inspect writes by default: see
`inspect_eval.read_eval_log`) or `.json`, or a folder of them (an eval set).

One sample (epoch) is one run: agent = the task, model = `eval.model`, passed = the first
scorer's value `C` (`I` failed, `P` failed with score 0.5), explanation = that score's
`explanation`, every scorer in outcome.scores (the scores table), error = the sample's error,
tokens = the solver's model events (a model-graded
scorer's calls, in its scorer span, are the grader's: metadata `grader_input_tokens`,
`grader_output_tokens`, `grader_model_calls`; without events, the sample's `model_usage`),
runtime = `total_time`, times = the sample's `started_at`/`completed_at`, else its events'
first and last timestamps, else the eval's; Inspect's tool calls (`function` holds the tool
name) become flat calls, `reasoning` parts thinking.
"""

import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from transforms.errors import InputError
from transforms.importers import FORMATS
from transforms.importers.common import Importer, Lines, final, ms, parse_time, rfc3339


def matches(doc: Any) -> bool:
    return isinstance(doc, dict) and "samples" in doc and "eval" in doc


LOG_NAME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}.*\.json")
"""A `.json` Inspect log's name (Inspect's own rule): it starts with the eval's start time,
which leaves out an eval set's `logs.json` and `eval-set.json`."""


def logs_in(folder: Path) -> list[Path]:
    """An eval set's logs: every `.eval`, and every `.json` named like an Inspect log, in the
    folder and its subfolders (hidden ones left out)."""
    found = sorted(p for p in folder.rglob("*") if p.is_file() and not any(
        part.startswith(".") for part in p.relative_to(folder).parts) and (
        p.suffix == ".eval" or LOG_NAME.fullmatch(p.name)))
    if not found:
        raise InputError(f"{folder}: a folder with no Inspect logs (*.eval, or *.json "
                         "named by the eval's start time)")
    return found


def _message(m: Any) -> Any:
    if not isinstance(m, dict):
        return m
    out: dict[str, Any] = {"role": m.get("role")}
    content = m.get("content")
    if isinstance(content, list):
        parts = []
        for p in content:
            if isinstance(p, dict) and p.get("type") == "reasoning":
                parts.append({"type": "thinking", "thinking": p.get("reasoning") or ""})
            else:
                parts.append(p)
        content = parts
    out["content"] = content
    calls = m.get("tool_calls")
    if isinstance(calls, list):
        # Inspect names the tool in `function` as a string: the flat shape's `name`.
        out["tool_calls"] = [{"id": c.get("id"), "name": c.get("function"),
                              "arguments": c.get("arguments")} if isinstance(c, dict) else c
                             for c in calls]
    if m.get("tool_call_id"):
        out["tool_call_id"] = m["tool_call_id"]
    if isinstance(m.get("function"), str):
        out["name"] = m["function"]
    return out


def _first_score(sample: dict[str, Any]) -> dict[str, Any] | None:
    scores = sample.get("scores")
    first = next(iter(scores.values()), None) if isinstance(scores, dict) else None
    return first if isinstance(first, dict) else None


_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
"""Inspect's letter values (correct, incorrect, partial, no answer) as numbers."""


def _named_scores(sample: dict[str, Any], attachments: dict[str, Any]
                  ) -> dict[str, dict[str, Any]]:
    """Every scorer of the sample as outcome.scores: its value as a number (letters C, I, P, N
    as 1, 0, 0.5, 0; booleans as 1 and 0) and as the label when it is text; its explanation.
    A scorer that gives a dict of values (several metrics) is one score per key, named
    `scorer/key`."""
    scores = sample.get("scores")
    out: dict[str, dict[str, Any]] = {}
    for name, sc in (scores.items() if isinstance(scores, dict) else []):
        if not isinstance(sc, dict):
            continue
        value = sc.get("value")
        why = _attachment(sc.get("explanation"), attachments)
        parts = value.items() if isinstance(value, dict) else [(None, value)]
        for key, v in parts:
            entry: dict[str, Any] = {}
            if isinstance(v, int | float):  # a bool too: 1.0 or 0.0
                entry["value"] = float(v)
            elif isinstance(v, str):
                entry["label"] = v
                if v in _LETTERS:
                    entry["value"] = _LETTERS[v]
            if isinstance(why, str) and why:
                entry["explanation"] = why
            out[f"{name}/{key}" if key is not None else str(name)] = entry
    return out


def _status(sample: dict[str, Any]) -> tuple[str | None, float | None]:
    if sample.get("error"):
        return "error", None
    first = _first_score(sample)
    if first is None:
        return None, None
    value = first.get("value")
    if value in ("C", True) or (isinstance(value, int | float) and value == 1):
        return "passed", 1.0
    if value in ("I", "P", "N", False) or isinstance(value, int | float):
        return "failed", 0.5 if value == "P" else (float(value) if isinstance(
            value, int | float) else 0.0)
    return None, None


_SCORING = ("scorer", "scorers")
"""Inspect's span types (and the outer span's name) that mark scoring: a model call inside
one is the grader's (a model-graded scorer), not the agent's."""


def _usage(events: list[Any]) -> tuple[tuple[int, int, int] | None,
                                       tuple[int, int, int] | None]:
    """(input, output, calls) of the solver's model events and of the scorers' ones, from
    each `model` event's `output.usage`; None when the sample has no model events. An event
    is the grader's when its span, or a span above it, is a scorer span (Inspect >= 0.3.80
    logs: `span_begin` with `type` scorer, inside the `scorers` span), or, in older logs
    without spans, when it falls between a scorer `step` begin and its end."""
    spans: dict[str, tuple[str | None, bool]] = {}  # id -> (parent, is scoring)
    for e in events:
        if isinstance(e, dict) and e.get("event") == "span_begin" and isinstance(
                e.get("id"), str):
            spans[e["id"]] = (e.get("parent_id"),
                              e.get("type") in _SCORING or e.get("name") == "scorers")

    def scoring(span_id: Any) -> bool:
        seen: set[str] = set()
        while isinstance(span_id, str) and span_id in spans and span_id not in seen:
            seen.add(span_id)
            parent, is_scoring = spans[span_id]
            if is_scoring:
                return True
            span_id = parent
        return False

    solver, grader = [0, 0, 0], [0, 0, 0]
    in_scorer_step = 0
    any_model = False
    for e in events:
        if not isinstance(e, dict):
            continue
        if e.get("event") == "step" and e.get("type") in _SCORING:
            if e.get("action") == "begin":
                in_scorer_step += 1
            elif e.get("action") == "end" and in_scorer_step:
                in_scorer_step -= 1
            continue
        if e.get("event") != "model":
            continue
        any_model = True
        out = e.get("output")
        usage = out.get("usage") if isinstance(out, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        into = grader if in_scorer_step or scoring(e.get("span_id")) else solver
        for i, key in enumerate(("input_tokens", "output_tokens")):
            n = usage.get(key)
            into[i] += n if isinstance(n, int) and not isinstance(n, bool) else 0
        into[2] += 1
    if not any_model:
        return None, None
    return (solver[0], solver[1], solver[2]), \
        ((grader[0], grader[1], grader[2]) if grader[2] else None)


def _utc_time(ts: Any) -> datetime | None:
    t = parse_time(ts)
    return t.astimezone(UTC) if t else None


def _times(sample: dict[str, Any], stats: dict[str, Any]
           ) -> tuple[datetime | None, datetime | None, str]:
    """The sample's start and end: its own started_at/completed_at (newer logs), else the
    first and last of its events' timestamps, else the eval's stats (the whole eval's span)."""
    start, end = _utc_time(sample.get("started_at")), _utc_time(sample.get("completed_at"))
    if start:
        return start, end, "sample"
    stamps = [t for t in (_utc_time(e.get("timestamp")) for e in sample.get("events") or []
                          if isinstance(e, dict)) if t]
    if stamps:
        return min(stamps), max(stamps), "events"
    return _utc_time(stats.get("started_at")), _utc_time(stats.get("completed_at")), "eval"


def _attachment(text: Any, attachments: Any) -> Any:
    """Inspect moves long strings to the sample's `attachments` and leaves
    `attachment://<hash>` in their place: the text itself."""
    if isinstance(text, str) and text.startswith("attachment://") and isinstance(
            attachments, dict):
        found = attachments.get(text[len("attachment://"):])
        if isinstance(found, str):
            return found
    return text


def convert(src: Path, doc: Any, agent: str | None, model: str | None
            ) -> tuple[Lines, list[str]]:
    ev = doc.get("eval") or {}
    stats = doc.get("stats") if isinstance(doc.get("stats"), dict) else {}
    task = ev.get("task") or src.stem
    lines = []
    n_graded_by_model = n_usage_fallback = 0
    times_from: Counter[str] = Counter()
    for sample in doc.get("samples") or []:
        attachments = sample.get("attachments")
        msgs = []
        for m in sample.get("messages") or []:
            out = _message(m)
            if isinstance(out, dict):
                content = out.get("content")
                out["content"] = [{**p, **{k: _attachment(p[k], attachments) for k in (
                    "text", "thinking") if k in p}} if isinstance(p, dict) else p
                    for p in content] if isinstance(content, list) else _attachment(
                    content, attachments)
            msgs.append(out)
        metadata: dict[str, Any] = {"model": model or ev.get("model")}
        solver, grader = _usage(sample.get("events") or [])
        usage = sample.get("model_usage") or {}
        if solver is not None:
            metadata["total_input_tokens"], metadata["total_output_tokens"] = solver[:2]
        elif usage:
            # No events to tell the agent's calls from the grader's: the sample's total.
            n_usage_fallback += 1
            metadata["total_input_tokens"] = sum(u.get("input_tokens") or 0
                                                 for u in usage.values())
            metadata["total_output_tokens"] = sum(u.get("output_tokens") or 0
                                                  for u in usage.values())
        if grader is not None:
            n_graded_by_model += 1
            metadata.update(grader_input_tokens=grader[0], grader_output_tokens=grader[1],
                            grader_model_calls=grader[2])
        if isinstance(sample.get("total_time"), int | float):
            metadata["agent_runtime_ms"] = ms(src, sample["total_time"], f"sample "
                                              f"{str(sample.get('id'))[:40]}'s total_time")
        status, score = _status(sample)
        output = sample.get("output") or {}
        completion = _attachment(output.get("completion"), attachments) if isinstance(
            output.get("completion"), str) else final(msgs)
        line: dict[str, Any] = {
            "run_id": str(sample.get("uuid") or f"{ev.get('run_id', src.stem)}-"
                                                 f"{sample.get('id')}-{sample.get('epoch', 1)}"),
            "agent": agent or task, "test_case_id": f"{task}/{sample.get('id')}",
            "batch_id": ev.get("run_id"),
            "response": {"final_response": completion or final(msgs), "messages": msgs,
                         "metadata": metadata}}
        if status:
            line["outcome"] = {"status": status, "score": score}
            if status == "error":
                line["outcome"]["error"] = str(sample["error"].get("message")
                                               if isinstance(sample["error"], dict)
                                               else sample["error"])[:1000]
        named = _named_scores(sample, attachments)
        if named:
            line.setdefault("outcome", {})["scores"] = named
        first = _first_score(sample)
        explanation = _attachment(first.get("explanation"), attachments) if first else None
        if isinstance(explanation, str) and explanation:
            line.setdefault("outcome", {})["explanation"] = explanation
        start, end, origin = _times(sample, stats)
        if start:
            line["started_at"] = rfc3339(start)
            times_from[origin] += 1
        if end:
            line["ended_at"] = rfc3339(end)
        lines.append(line)
    lacks = []
    if doc.get("status") != "success":
        lacks.append(f"the log's status is {doc.get('status')!r}: its samples are imported "
                     "as they are")
    if n_graded_by_model:
        lacks.append(f"{n_graded_by_model} sample(s) graded by a model: the grader's calls are "
                     "left out of the run's tokens (metadata grader_input_tokens, "
                     "grader_output_tokens)")
    if n_usage_fallback:
        lacks.append(f"{n_usage_fallback} sample(s) without model events: tokens are the "
                     "sample's model_usage, a model grader's calls included")
    if times_from["eval"]:
        lacks.append(f"{times_from['eval']} sample(s) without times of their own: dated by "
                     "the eval's start and end")
    return lines, lacks


IMPORTER = Importer(
    name="inspect",
    describe=FORMATS["inspect"],
    matches=matches, convert=convert, files_in=logs_in)
