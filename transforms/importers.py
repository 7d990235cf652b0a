"""`runlake import FORMAT SRC... --out DIR`: other tools' result files as runlake landing files.

Each importer reads one source file and returns response envelope lines (formats.md §1), which
are written to `DIR/<source name>.responses.jsonl`; the landing folder stays the one input of
the pipeline. Each also says what the source lacks, so a user knows which columns stay empty.

- `tau-bench`: a historical trajectories array `[{task_id, trial, reward, info, traj}]`. One
  element is one run: `traj` is the OpenAI-style transcript (nested tool calls), passed =
  `reward == 1.0`, explanation = `info.reward_info` in a line (r_actions: the database check;
  r_outputs: the outputs missing from the replies). The file names no model or agent
  (`--model`, `--agent` supply them) and has no tokens, runtime or times.
- `tau2`: a tau2-bench results file `{info, tasks, simulations}`. One simulation is one run:
  the domain policy becomes the system message, `messages` the transcript (flat tool calls; a
  tool message's `id` is its call id), passed = `reward == 1.0`, explanation = `reward_info`
  in a line (reward breakdown, database check, the failed checks of the reward basis),
  runtime = `duration`, times from `start_time`/`end_time`, agent =
  `info.agent_info.implementation`, model = `info.agent_info.llm`, tokens = the assistant
  messages' `usage` (the user simulator's usage is not the agent's and is left out).
- `inspect`: an Inspect AI eval log, `.eval` (the zip Inspect writes by default: see
  `read_eval_log`) or `.json`, or a folder of them (an eval set). One sample (epoch) is one
  run: agent = the task, model = `eval.model`, passed = the first scorer's value `C` (`I`
  failed, `P` failed with score 0.5), explanation = that score's `explanation`, error = the
  sample's error, tokens = the solver's model events (a model-graded scorer's calls, in its
  scorer span, are the grader's: metadata `grader_input_tokens`, `grader_output_tokens`,
  `grader_model_calls`; without events, the sample's `model_usage`), runtime = `total_time`,
  times = the sample's `started_at`/`completed_at`, else its events' first and last
  timestamps, else the eval's; Inspect's tool calls (`function` holds the tool name) become
  flat calls, `reasoning` parts thinking.
- `langfuse`: a Langfuse trace export `{trace, observations}`, written as span JSONL (one
  CreateSpansBulk line per trace): ids, parents and times as exported, the OTel attributes and
  resource attributes from `metadata`, and for GENERATION observations a log_request (model,
  provider from gen_ai.provider.name / gen_ai.system / llm.provider, input and output messages
  from the framework's shape, `inputUsage`/`outputUsage` tokens, `totalCost`).
- `otlp`: OpenTelemetry spans saved as one JSON document: a collector export
  `{resourceSpans}`, a JSON array of OTLP spans or OTel JS ReadableSpans (`spanContext`,
  `[s, ns]` times), or one span. Written as `*.otlp.jsonl`, one span (or export) per line, for
  the OTLP reader (transforms/normalize/otlp.py), which maps the GenAI conventions.
- `agentops`: an AgentOps trace export `{trace, spans}`. Each span becomes an OTLP span: ids,
  parent, name, kind, ISO times, status, and its nested `span_attributes` flattened to dotted
  OTel keys (`gen_ai.usage.prompt_tokens`, `gen_ai.prompt`, ...); a span inherits
  `gen_ai.agent.name` from the nearest agent span above it (the agent's `role`).
- `swe-agent`: a SWE-agent trajectory (`.traj`). One file is one run: `history` is the
  transcript (a tool message's `tool_call_ids` gives its call id), tokens from
  `info.model_stats` (`tokens_sent` / `tokens_received`; a replay's zeros are left out), model
  from `replay_config`, the instance id as the test case, `exit_status`, `instance_cost`,
  `api_calls` and the tools' summed `execution_time` as metadata. No pass/fail: whether the
  patch resolves the issue is the SWE-bench harness's verdict, not the trajectory's.
- `openhands`: an OpenHands event list. One file is one run: user messages, each distinct LLM
  response (`tool_call_metadata.model_response`: the assistant message with its tool calls,
  model and usage), observations as tool results, agent messages; times from the first to
  the last event, runtime the time the agent worked (gaps ending at an agent event, so time
  spent waiting for the user is left out); tokens only when every agent step carries its LLM
  response.
"""

import json
import math
import os
import re
import uuid
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from transforms.errors import InputError
from transforms.normalize.columns import INT64_MAX
from transforms.normalize.spans import AGENT_KEYS, ALIASES

_KEEP = ("role", "content", "tool_calls", "tool_call_id", "name")


@dataclass
class ImportResult:
    source: Path
    output: Path
    runs: int
    passed: int
    graded: int = 0
    notes: list[str] = field(default_factory=list)
    """What the source lacks or how it was read, one sentence each."""


def sniff(doc: Any) -> str:
    """What a parsed JSON document looks like, for error messages."""
    if isinstance(doc, list) and doc and isinstance(doc[0], dict) and "traj" in doc[0]:
        return "tau-bench"
    if isinstance(doc, list) and doc and all(_is_span(x) for x in doc):
        return "otlp"
    if isinstance(doc, list) and doc and all(
            isinstance(e, dict) and "source" in e and ("action" in e or "observation" in e)
            for e in doc):
        return "openhands"
    if isinstance(doc, dict):
        if "simulations" in doc and "tasks" in doc:
            return "tau2"
        if isinstance(doc.get("history"), list) and isinstance(doc.get("info"), dict) and \
                "trajectory" in doc:
            return "swe-agent"
        if "samples" in doc and "eval" in doc:
            return "inspect"
        if "resourceSpans" in doc or _is_span(doc):
            return "otlp"
        if isinstance(doc.get("trace"), dict) and isinstance(doc.get("spans"), list) and all(
                isinstance(x, dict) and "span_attributes" in x for x in doc["spans"]):
            return "agentops"
        if isinstance(doc.get("data"), dict) and "conversationHistory" in doc["data"]:
            return "durable"
        if doc and all(isinstance(k, str) and k.startswith(("gen_ai.", "llm.", "ai.",
                                                             "openinference."))
                       for k in doc if "." in k) and any("." in k for k in doc):
            return "span attributes"
        if "observations" in doc or ("trace" in doc and "observations" in doc.get("trace", {})):
            return "langfuse"
    return "unknown"


def _is_span(x: Any) -> bool:
    """An OTLP span (traceId, spanId) or an OTel JS ReadableSpan (spanContext)."""
    return isinstance(x, dict) and (("traceId" in x and "spanId" in x)
                                    or isinstance(x.get("spanContext"), dict))


def _load(src: Path) -> tuple[Any, int]:
    """The parsed document, and how many NaN/Infinity values it held (Python's json writes
    the constants; a number beyond a double's range, like 1e999, reads as Infinity): they
    become null, since the landing JSONL must be strict JSON. A zip archive (an Inspect
    `.eval` log) is read as the JSON log it holds."""
    nonfinite = 0

    def constant(_: str) -> None:
        nonlocal nonfinite
        nonfinite += 1

    def number(text: str) -> float | None:
        value = float(text)
        if math.isfinite(value):
            return value
        constant(text)
        return None

    try:
        with src.open("rb") as f:
            is_zip = f.read(4) == ZIP_MAGIC
        if is_zip:
            return read_eval_log(src, constant, number), nonfinite
        if src.suffix == ".eval":
            raise InputError(f"{src}: not an Inspect .eval log: not a zip archive (an .eval "
                             "log is one; a damaged or partly copied file is not)")
        return json.loads(src.read_bytes(), parse_constant=constant,
                          parse_float=number), nonfinite
    except OSError as e:
        raise InputError(f"{src}: cannot read ({e.strerror})") from None
    except RecursionError:
        raise InputError(f"{src}: {TOO_DEEP}") from None
    except ValueError as e:
        raise InputError(f"{src}: not a JSON document ({e})") from None


TOO_DEEP = "JSON nested too deeply to import (Python's JSON reader stops near 1,000 levels)"


ZIP_MAGIC = b"PK\x03\x04"
EVAL_MEMBER_LIMIT = 512 * 1024 * 1024
"""Bytes one member of an `.eval` zip may inflate to (a guard against zip bombs)."""
EVAL_TOTAL_LIMIT = 2 * 1024 * 1024 * 1024
"""Bytes all the members read from one `.eval` zip may inflate to."""
EVAL_MAX_MEMBERS = 200_000
_ZIP_ZSTD = 93
"""Zip method id of zstandard: recent Inspect versions (0.3.285 does) write their `.eval`
members with it (older ones deflate them); Python's zipfile reads it only from 3.14."""
_EVAL_SAMPLE = re.compile(r"samples/[^/]+\.json")


def _member_name(name: str) -> str:
    """A zip member's name as shown in a message: quoted and cut, never used as a path."""
    return repr(name[:80] + ("..." if len(name) > 80 else ""))


def _read_member(src: Path, z: zipfile.ZipFile, info: zipfile.ZipInfo, budget: int) -> bytes:
    """One member's bytes, inflated at most to `budget` (never beyond EVAL_MEMBER_LIMIT)."""
    name = _member_name(info.filename)
    limit = min(EVAL_MEMBER_LIMIT, budget)
    if info.flag_bits & 0x1:
        raise InputError(f"{src}: member {name} is encrypted; runlake reads unencrypted "
                         ".eval logs")
    if info.file_size > limit:
        raise InputError(f"{src}: member {name} inflates to {info.file_size:,} bytes, over "
                         f"the {limit:,}-byte limit runlake reads from one .eval log")
    if info.compress_type in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        with z.open(info) as f:
            data = f.read(limit + 1)
    elif info.compress_type == _ZIP_ZSTD:
        import zstandard

        assert z.fp is not None
        z.fp.seek(info.header_offset)
        local = z.fp.read(30)
        if len(local) != 30 or local[:4] != ZIP_MAGIC:
            raise zipfile.BadZipFile(f"bad local header of member {name}")
        skip = int.from_bytes(local[26:28], "little") + int.from_bytes(local[28:30], "little")
        z.fp.seek(info.header_offset + 30 + skip)
        raw = z.fp.read(info.compress_size)
        reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
        chunks, size = [], 0
        while size <= limit:
            chunk = reader.read(1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        data = b"".join(chunks)
        if len(data) <= limit and zlib.crc32(data) != info.CRC:
            raise zipfile.BadZipFile(f"bad CRC-32 for member {name}")
    else:
        raise InputError(f"{src}: member {name} is compressed with zip method "
                         f"{info.compress_type}; runlake reads stored, deflate and zstd "
                         "members")
    if len(data) > limit:
        raise InputError(f"{src}: member {name} inflates past the {limit:,}-byte limit "
                         "runlake reads from one .eval log")
    return data


def read_eval_log(src: Path, parse_constant: Callable[[str], Any] | None = None,
                  parse_float: Callable[[str], Any] | None = None) -> dict[str, Any]:
    """An Inspect `.eval` log (a zip archive) as the document its `.json` form holds.

    Layout, as Inspect writes it (inspect_ai/log/_recorders/eval.py): `header.json` (version,
    status, eval, plan, results, stats, error) once the eval finished, else
    `_journal/start.json` (version, eval, plan) of a log still running or cut short;
    `samples/<id>_epoch_<n>.json` one sample each (a name written twice: the last entry wins);
    `reductions.json`; `summaries.json` and `_journal/summaries/*.json` repeat the samples'
    scores and are not needed. Members are read into memory by name, never extracted: their
    names never become paths."""
    budget = EVAL_TOTAL_LIMIT

    def member_json(info: zipfile.ZipInfo) -> Any:
        nonlocal budget
        data = _read_member(src, z, info, budget)
        budget -= len(data)
        try:
            return json.loads(data, parse_constant=parse_constant, parse_float=parse_float)
        except RecursionError:
            raise InputError(f"{src}: member {_member_name(info.filename)}: "
                             f"{TOO_DEEP}") from None
        except ValueError as e:
            raise InputError(f"{src}: member {_member_name(info.filename)} is not a JSON "
                             f"document ({e})") from None

    try:
        try:
            z = zipfile.ZipFile(src)
        except zipfile.BadZipFile:
            raise InputError(f"{src}: a damaged .eval log: its zip directory is missing or cut "
                             "short (a partly written or partly copied file?)") from None
        with z:
            infos = z.infolist()
            if len(infos) > EVAL_MAX_MEMBERS:
                raise InputError(f"{src}: {len(infos):,} members, more than the "
                                 f"{EVAL_MAX_MEMBERS:,} runlake reads from one .eval log")
            members = {i.filename: i for i in infos}  # a name written again: the last wins
            head_info = members.get("header.json") or members.get("_journal/start.json")
            if head_info is None:
                shown = ", ".join(_member_name(n) for n in list(members)[:3]) or "none"
                raise InputError(f"{src}: a zip archive but not an Inspect .eval log: no "
                                 f"header.json or _journal/start.json member (members: "
                                 f"{shown})")
            head = member_json(head_info)
            if not isinstance(head, dict) or not isinstance(head.get("eval"), dict):
                raise InputError(f"{src}: member {_member_name(head_info.filename)} is not an "
                                 "Inspect log header (an object with `eval`)")
            doc: dict[str, Any] = dict(head)
            doc.setdefault("status", "started")  # the journal's start: the eval never finished
            samples = []
            for name, info in members.items():
                if _EVAL_SAMPLE.fullmatch(name):
                    sample = member_json(info)
                    if not isinstance(sample, dict):
                        raise InputError(f"{src}: member {_member_name(name)} is not an "
                                         "Inspect sample (a JSON object)")
                    samples.append(sample)
            if "reductions.json" in members:
                doc["reductions"] = member_json(members["reductions.json"])
    except InputError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error, OSError,
            NotImplementedError, RuntimeError, ValueError) as e:
        raise InputError(f"{src}: a damaged .eval log (zip archive): {str(e)[:160]}") from None
    except Exception as e:  # zstandard.ZstdError: corrupt compressed data
        if type(e).__module__.startswith("zstandard") or type(e).__name__ == "ZstdError":
            raise InputError(f"{src}: a damaged .eval log (zip archive): a member's zstd data "
                             f"is corrupt ({str(e)[:120]})") from None
        raise
    # Inspect's order: by epoch, then id (numbers zero-filled).
    samples.sort(key=lambda s: (s.get("epoch") if isinstance(s.get("epoch"), int) else 0,
                                s["id"] if isinstance(s.get("id"), str)
                                else str(s.get("id")).zfill(20)))
    doc["samples"] = samples
    return doc


def _a(word: str) -> str:
    return "an" if word[:1] in ("a", "e", "i", "o", "u") else "a"


def _wrong(src: Path, fmt: str, doc: Any) -> InputError:
    seen = sniff(doc)
    hint = {"unknown": "its shape matches no format runlake imports",
            "durable": "it is a durable agent state document: put it in the landing folder as "
                       "*.durable.json, no import needed",
            "span attributes": "it holds one span's attributes without ids or times; "
                               "runlake imports whole spans (traceId, spanId, times)",
            }.get(seen, f"it looks like {_a(seen)} {seen} file: use `runlake import {seen}`")
    return InputError(f"{src}: not {_a(fmt)} {fmt} file; {hint}")


def _final(messages: list[Any]) -> str:
    for m in reversed(messages):
        if isinstance(m, dict) and m.get("role") == "assistant" and \
                isinstance(m.get("content"), str) and m["content"]:
            return str(m["content"])
    return ""


def _utc(ts: Any) -> str | None:
    if not isinstance(ts, str) or not ts:
        return None
    return ts if re.search(r"(Z|[+-]\d\d:?\d\d)$", ts) else ts + "Z"


def _explained(why: str | None) -> dict[str, str]:
    return {"explanation": why} if why else {}


def _ms(src: Path, seconds: float, what: str) -> int:
    """Seconds as whole milliseconds; a duration no count can hold (1e308 s) is refused."""
    ms = seconds * 1000
    if not math.isfinite(ms) or abs(ms) > INT64_MAX:
        raise InputError(f"{src}: {what} {seconds:g} s is out of range for a duration")
    return round(ms)


def _num(v: Any) -> str:
    return f"{v:g}" if isinstance(v, int | float) and not isinstance(v, bool) else str(v)


def _tau_bench_why(info: Any) -> str | None:
    """tau-bench's reward info in a line: the reward, and what decided it: the database
    after the run against the one the expected actions give (`r_actions`), or which expected
    outputs the agent's replies lacked (`r_outputs`)."""
    if not isinstance(info, dict):
        return None
    parts = [f"reward {_num(info.get('reward'))}"]
    detail: dict[str, Any] = info["info"] if isinstance(info.get("info"), dict) else {}
    if "r_actions" in detail:
        parts.append(f"r_actions {_num(detail['r_actions'])}" + (
            "" if detail["r_actions"] == 1 else
            " (the database after the run differs from the one the expected actions give)"))
    if "r_outputs" in detail:
        outputs: dict[str, Any] = detail["outputs"] if isinstance(detail.get("outputs"),
                                                                  dict) else {}
        missing = [str(k) for k, found in outputs.items() if not found]
        parts.append(f"r_outputs {_num(detail['r_outputs'])}" + (
            f" (outputs missing from the replies: {', '.join(missing)})" if missing else ""))
    return "; ".join(parts)[:2000]


def _tau2_why(info: Any) -> str | None:
    """tau2's reward info in a line: the reward and its breakdown, the database check, and
    each action, assertion or communication check that failed, for the checks the reward is
    based on (`reward_basis`)."""
    if not isinstance(info, dict):
        return None
    parts = [f"reward {_num(info.get('reward'))}"]
    breakdown = info.get("reward_breakdown")
    if isinstance(breakdown, dict) and breakdown:
        parts.append("breakdown " + ", ".join(f"{k} {_num(v)}" for k, v in breakdown.items()))
    db = info.get("db_check")
    if isinstance(db, dict) and db.get("db_match") is not None:
        parts.append("database matches the expected one" if db["db_match"] else
                     "database differs from the expected one")
    basis = info.get("reward_basis")

    def scored(kind: str) -> bool:  # a check outside reward_basis did not decide the reward
        return not isinstance(basis, list) or kind in basis

    for c in info.get("action_checks") or [] if scored("ACTION") else []:
        if isinstance(c, dict) and c.get("action_match") is False:
            action: dict[str, Any] = c["action"] if isinstance(c.get("action"), dict) else {}
            args = json.dumps(action.get("arguments"), ensure_ascii=False, sort_keys=True)
            parts.append(f"expected action not taken: {action.get('name')} "
                         f"{args[:120] + ('...' if len(args) > 120 else '')}")
    for key, kind, what, text in (
            ("nl_assertions", "NL_ASSERTION", "assertion not met", "nl_assertion"),
            ("communicate_checks", "COMMUNICATE", "not communicated", "info"),
            ("env_assertions", "ENV_ASSERTION", "environment assertion not met", "")):
        for c in info.get(key) or [] if scored(kind) else []:
            if isinstance(c, dict) and c.get("met") is False:
                said = c.get(text) if text else c.get("env_assertion")
                parts.append(f"{what}: {said if isinstance(said, str) else json.dumps(said)}")
    return "; ".join(parts)[:2000]


def tau_bench(src: Path, doc: Any, agent: str | None, model: str | None
              ) -> tuple[list[dict[str, Any]], list[str]]:
    if sniff(doc) != "tau-bench":
        raise _wrong(src, "tau-bench", doc)
    lines = []
    for r in doc:
        traj = r.get("traj") or []
        reward = r.get("reward")
        lines.append({
            "run_id": f"{src.stem}-{r.get('task_id')}-{r.get('trial', 0)}",
            "agent": agent or "tau-bench",
            **({"model": model} if model else {}),
            "test_case_id": f"{src.stem}/{r.get('task_id')}",
            "outcome": {"status": "passed" if reward == 1.0 else "failed", "score": reward,
                        **_explained(_tau_bench_why((r.get("info") or {}).get("reward_info")))},
            "response": {"final_response": _final(traj), "messages": traj}})
    lacks = ["no tokens, runtime or times in the source: those columns stay empty"] + (
        [] if model else ["no model in the source (pass --model)"])
    return lines, lacks


def tau2(src: Path, doc: Any, agent: str | None, model: str | None
         ) -> tuple[list[dict[str, Any]], list[str]]:
    if sniff(doc) != "tau2":
        raise _wrong(src, "tau2", doc)
    info = doc.get("info") or {}
    agent_info = info.get("agent_info") or {}
    env = info.get("environment_info") or {}
    domain = env.get("domain_name") or src.stem
    policy = env.get("policy")
    lines = []
    any_tokens = False
    for sim in doc["simulations"]:
        msgs: list[dict[str, Any]] = []
        if isinstance(policy, str) and policy:
            msgs.append({"role": "system", "content": policy})
        tokens_in = tokens_out = 0
        has_usage = False
        for m in sim.get("messages") or []:
            if not isinstance(m, dict):
                msgs.append(m)  # kept as is: the ingest flags it
                continue
            out = {k: m[k] for k in _KEEP if m.get(k) is not None}
            if m.get("role") == "tool" and "tool_call_id" not in out and m.get("id"):
                out["tool_call_id"] = m["id"]
            if out.get("tool_calls"):
                out["tool_calls"] = [{k: v for k, v in c.items() if k != "requestor"}
                                     if isinstance(c, dict) else c for c in out["tool_calls"]]
            usage = m.get("usage")
            if m.get("role") == "assistant" and isinstance(usage, dict):
                has_usage = True
                tokens_in += usage.get("prompt_tokens") or 0
                tokens_out += usage.get("completion_tokens") or 0
            msgs.append(out)
        any_tokens = any_tokens or has_usage
        reward = (sim.get("reward_info") or {}).get("reward")
        duration = sim.get("duration")
        metadata: dict[str, Any] = {}
        if model or agent_info.get("llm"):
            metadata["model"] = model or agent_info.get("llm")
        if has_usage:
            metadata.update(total_input_tokens=tokens_in, total_output_tokens=tokens_out)
        if isinstance(duration, int | float):
            metadata["agent_runtime_ms"] = _ms(src, duration, f"simulation "
                                               f"{str(sim.get('id'))[:40]}'s duration")
        line: dict[str, Any] = {
            "run_id": str(sim.get("id") or f"{src.stem}-{sim.get('task_id')}-"
                                              f"{sim.get('trial', 0)}"),
            "agent": agent or agent_info.get("implementation") or "tau2",
            "test_case_id": f"{domain}/{sim.get('task_id')}",
            "outcome": {"status": "passed" if reward == 1.0 else "failed", "score": reward,
                        **_explained(_tau2_why(sim.get("reward_info")))},
            "response": {"final_response": _final(msgs), "messages": msgs,
                         "metadata": metadata}}
        for key, value in (("started_at", _utc(sim.get("start_time"))),
                           ("ended_at", _utc(sim.get("end_time")))):
            if value:
                line[key] = value
        lines.append(line)
    lacks = [] if any_tokens else ["no agent token usage in the source (only the user "
                                   "simulator reports it): the token columns stay empty"]
    return lines, lacks


def _inspect_message(m: Any) -> Any:
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


def _inspect_status(sample: dict[str, Any]) -> tuple[str | None, float | None]:
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


def _inspect_usage(events: list[Any]) -> tuple[tuple[int, int, int] | None,
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


def _iso_utc(ts: Any) -> datetime | None:
    if not isinstance(ts, str) or not ts:
        return None
    try:
        t = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (t if t.tzinfo else t.replace(tzinfo=UTC)).astimezone(UTC)


def _rfc3339(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def _inspect_times(sample: dict[str, Any], stats: dict[str, Any]
                   ) -> tuple[datetime | None, datetime | None, str]:
    """The sample's start and end: its own started_at/completed_at (newer logs), else the
    first and last of its events' timestamps, else the eval's stats (the whole eval's span)."""
    start, end = _iso_utc(sample.get("started_at")), _iso_utc(sample.get("completed_at"))
    if start:
        return start, end, "sample"
    stamps = [t for t in (_iso_utc(e.get("timestamp")) for e in sample.get("events") or []
                          if isinstance(e, dict)) if t]
    if stamps:
        return min(stamps), max(stamps), "events"
    return _iso_utc(stats.get("started_at")), _iso_utc(stats.get("completed_at")), "eval"


def _attachment(text: Any, attachments: Any) -> Any:
    """Inspect moves long strings to the sample's `attachments` and leaves
    `attachment://<hash>` in their place: the text itself."""
    if isinstance(text, str) and text.startswith("attachment://") and isinstance(
            attachments, dict):
        found = attachments.get(text[len("attachment://"):])
        if isinstance(found, str):
            return found
    return text


def inspect_log(src: Path, doc: Any, agent: str | None, model: str | None
                ) -> tuple[list[dict[str, Any]], list[str]]:
    if sniff(doc) != "inspect":
        raise _wrong(src, "inspect", doc)
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
            out = _inspect_message(m)
            if isinstance(out, dict):
                content = out.get("content")
                out["content"] = [{**p, **{k: _attachment(p[k], attachments) for k in (
                    "text", "thinking") if k in p}} if isinstance(p, dict) else p
                    for p in content] if isinstance(content, list) else _attachment(
                    content, attachments)
            msgs.append(out)
        metadata: dict[str, Any] = {"model": model or ev.get("model")}
        solver, grader = _inspect_usage(sample.get("events") or [])
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
            metadata["agent_runtime_ms"] = _ms(src, sample["total_time"], f"sample "
                                               f"{str(sample.get('id'))[:40]}'s total_time")
        status, score = _inspect_status(sample)
        output = sample.get("output") or {}
        final = _attachment(output.get("completion"), attachments) if isinstance(
            output.get("completion"), str) else _final(msgs)
        line: dict[str, Any] = {
            "run_id": str(sample.get("uuid") or f"{ev.get('run_id', src.stem)}-"
                                                 f"{sample.get('id')}-{sample.get('epoch', 1)}"),
            "agent": agent or task, "test_case_id": f"{task}/{sample.get('id')}",
            "batch_id": ev.get("run_id"),
            "response": {"final_response": final or _final(msgs), "messages": msgs,
                         "metadata": metadata}}
        if status:
            line["outcome"] = {"status": status, "score": score}
            if status == "error":
                line["outcome"]["error"] = str(sample["error"].get("message")
                                               if isinstance(sample["error"], dict)
                                               else sample["error"])[:1000]
        first = _first_score(sample)
        explanation = _attachment(first.get("explanation"), attachments) if first else None
        if isinstance(explanation, str) and explanation:
            line.setdefault("outcome", {})["explanation"] = explanation
        start, end, origin = _inspect_times(sample, stats)
        if start:
            line["started_at"] = _rfc3339(start)
            times_from[origin] += 1
        if end:
            line["ended_at"] = _rfc3339(end)
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


_ROLES = ("system", "user", "assistant", "tool")
_TEXT_TYPES = ("text", "input_text", "output_text")


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        out = []
        for b in content:
            if isinstance(b, dict) and b.get("type") in _TEXT_TYPES and isinstance(
                    b.get("text"), str):
                out.append({"type": "text", "text": b["text"]})
            elif isinstance(b, dict):
                out.append(b)
            elif isinstance(b, str):
                out.append({"type": "text", "text": b})
        return out
    return [] if content is None else [{"type": "text", "text": json.dumps(content)}]


def _chat(value: Any, role: str) -> list[dict[str, Any]]:
    """The messages of a Langfuse observation's input or output, whatever the framework's
    shape: role/content lists, {messages}, chat completions {choices}, responses {output};
    anything else is one `role` message holding its text."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return [{"role": role, "content": _blocks(value)}]
        if isinstance(parsed, (list, dict)):
            return _chat(parsed, role)
        return [{"role": role, "content": _blocks(value)}]
    if isinstance(value, list):
        msgs = [{"role": m["role"], "content": _blocks(m.get("content"))} for m in value
                if isinstance(m, dict) and m.get("role") in _ROLES]
        return msgs or ([{"role": role, "content": _blocks(json.dumps(value))}] if value
                        else [])
    if isinstance(value, dict):
        if isinstance(value.get("messages"), list):
            return _chat(value["messages"], role)
        choices = value.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            return _chat([choices[0].get("message")], role)
        if isinstance(value.get("output"), list):
            return _chat(value["output"], role)
        if value.get("role") in _ROLES:
            return _chat([value], role)
        return [{"role": role, "content": _blocks(json.dumps(value))}]
    return []


def _ns(ts: Any) -> int | None:
    """An ISO time as Unix nanoseconds, exact to the microsecond (no float rounding)."""
    if not isinstance(ts, str):
        return None
    try:
        t = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    return int(t.replace(microsecond=0).timestamp()) * 1_000_000_000 + t.microsecond * 1000


def langfuse(src: Path, doc: Any, agent: str | None, model: str | None
             ) -> tuple[list[dict[str, Any]], list[str]]:
    if sniff(doc) != "langfuse":
        raise _wrong(src, "langfuse", doc)
    trace = doc.get("trace") or {}
    service = agent or trace.get("name") or src.stem
    spans = []
    for o in doc.get("observations") or []:
        meta: Any = o.get("metadata")
        if isinstance(meta, str):
            try:
                meta = json.loads(meta)
            except ValueError:
                meta = {}
        meta = meta if isinstance(meta, dict) else {}
        attrs = dict(meta.get("attributes") or {})
        attrs["langfuse.observation.type"] = o.get("type")
        res_attrs = dict(meta.get("resourceAttributes") or {})
        res_attrs.setdefault("service.name", service)
        error = o.get("level") == "ERROR"
        span: dict[str, Any] = {
            "name": o.get("name") or o.get("type") or "observation",
            "context": {"trace_id": o.get("traceId") or trace.get("id"), "span_id": o.get("id"),
                        "trace_state": ""},
            "kind": "SpanKind.CLIENT" if o.get("type") == "GENERATION" else "SpanKind.INTERNAL",
            "parent_id": o.get("parentObservationId"),
            "start_time": _ns(o.get("startTime")),
            "end_time": _ns(o.get("endTime")) or _ns(o.get("startTime")),
            "status": {"status_code": "StatusCode.ERROR" if error else "StatusCode.OK",
                       **({"description": o.get("statusMessage")} if error else {})},
            "attributes": attrs,
            "resource": {"attributes": res_attrs, "schema_url": ""}}
        if o.get("type") == "GENERATION":
            provider = next((attrs[k] for k in ALIASES["provider"]
                             if isinstance(attrs.get(k), str)), "unknown")
            usage = o.get("usageDetails") or {}
            span["log_request"] = {
                "provider": provider, "model": model or o.get("model") or "unknown",
                "input": {"type": "chat", "messages": _chat(o.get("input"), "user")},
                "output": {"type": "chat", "messages": _chat(o.get("output"), "assistant")},
                "input_tokens": o.get("inputUsage", usage.get("input")),
                "output_tokens": o.get("outputUsage", usage.get("output")),
                **({"price": o["totalCost"]} if isinstance(o.get("totalCost"), int | float)
                   else {}),
                **({"status": "ERROR", "error_message": str(o.get("statusMessage"))[:1024]}
                   if error else {})}
        spans.append(span)
    notes = ["no pass/fail and no run record in a Langfuse export: its observations land as "
             "spans (and LLM calls), linked to runs only by a run_id attribute or trace id"]
    return [{"spans": spans}], notes


def otlp(src: Path, doc: Any, agent: str | None, model: str | None
         ) -> tuple[list[dict[str, Any]], list[str]]:
    if sniff(doc) != "otlp":
        raise _wrong(src, "otlp", doc)
    lines = doc if isinstance(doc, list) else [doc]
    if agent:
        for line in lines:
            if "resourceSpans" not in line:
                _set_attribute(line, "gen_ai.agent.name", agent, AGENT_KEYS)
                continue
            for rs in _as_list(line["resourceSpans"]):
                if isinstance(rs, dict) and isinstance(rs.setdefault("resource", {}), dict):
                    _set_attribute(rs["resource"], "service.name", agent, ("service.name",))
            for sp in _export_spans(line):
                _set_attribute(sp, "gen_ai.agent.name", agent, AGENT_KEYS)
    notes = ["no pass/fail and no run record in OTLP spans: they land as spans (and LLM "
             "calls), linked to runs only by a run_id attribute or trace id"]
    return lines, notes


def _as_list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _export_spans(line: Any) -> Iterator[dict[str, Any]]:
    """The span objects of an OTLP export record, walked as the reader walks them."""
    for rs in _as_list(line.get("resourceSpans") if isinstance(line, dict) else None):
        scopes = (rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans")) \
            if isinstance(rs, dict) else None
        for ss in _as_list(scopes):
            yield from (sp for sp in _as_list(ss.get("spans") if isinstance(ss, dict) else None)
                        if isinstance(sp, dict))


def _set_attribute(owner: dict[str, Any], key: str, value: str,
                   replaces: tuple[str, ...]) -> None:
    """Set one attribute of a span or resource, dropping the keys it `replaces`, whether its
    attributes are an OTLP KeyValue list or a plain object."""
    attrs = owner.get("attributes")
    if isinstance(attrs, list):
        owner["attributes"] = [a for a in attrs if isinstance(a, dict)
                               and a.get("key") not in replaces] + [
            {"key": key, "value": {"stringValue": value}}]
    else:
        kept = {k: v for k, v in (attrs if isinstance(attrs, dict) else {}).items()
                if k not in replaces}
        owner["attributes"] = {**kept, key: value}


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested attribute objects as OTel's dotted keys; lists and scalars stay values."""
    if not isinstance(value, dict):
        return {prefix: value} if prefix else {}
    out: dict[str, Any] = {}
    for k, v in value.items():
        out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    return out


_AO_KINDS = {"internal": "SPAN_KIND_INTERNAL", "server": "SPAN_KIND_SERVER",
             "client": "SPAN_KIND_CLIENT", "producer": "SPAN_KIND_PRODUCER",
             "consumer": "SPAN_KIND_CONSUMER"}
_AO_STATUS = {"OK": "STATUS_CODE_OK", "ERROR": "STATUS_CODE_ERROR", "UNSET": "STATUS_CODE_UNSET"}


def agentops(src: Path, doc: Any, agent: str | None, model: str | None
             ) -> tuple[list[dict[str, Any]], list[str]]:
    if sniff(doc) != "agentops":
        raise _wrong(src, "agentops", doc)
    trace_id = doc["trace"].get("trace_id")
    flat = [_flatten(s.get("span_attributes")) for s in doc["spans"]]
    by_id = {s.get("span_id"): i for i, s in enumerate(doc["spans"])}

    def agent_of(i: int | None) -> str | None:
        seen: set[int] = set()
        while i is not None and i not in seen:  # up the tree to the nearest agent span
            seen.add(i)
            role = flat[i].get("agent.role")
            if isinstance(role, str) and role:
                return role
            i = by_id.get(doc["spans"][i].get("parent_span_id"))
        return None

    lines = []
    for i, s in enumerate(doc["spans"]):
        attrs = dict(flat[i])
        if isinstance(s.get("attributes"), dict):
            attrs.update(_flatten(s["attributes"]))
        name = agent or agent_of(i)
        if name:
            attrs["gen_ai.agent.name"] = name
        status = {"code": _AO_STATUS.get(str(s.get("status_code")).upper(),
                                         "STATUS_CODE_UNSET")}
        if s.get("status_message"):
            status["message"] = s["status_message"]
        lines.append({
            "traceId": trace_id, "spanId": s.get("span_id"),
            **({"parentSpanId": s["parent_span_id"]} if s.get("parent_span_id") else {}),
            "name": s.get("span_name"),
            "kind": _AO_KINDS.get(str(s.get("span_kind")).lower(), "SPAN_KIND_INTERNAL"),
            "startTimeUnixNano": _ns(s.get("start_time")),
            "endTimeUnixNano": _ns(s.get("end_time")), "status": status, "attributes": attrs,
            "resource": {"attributes": _flatten(s.get("resource_attributes"))}})
    notes = ["no pass/fail and no run record in an AgentOps export: its spans land as spans "
             "(and LLM calls where they carry a model and tokens)"]
    return lines, notes


def swe_agent(src: Path, doc: Any, agent: str | None, model: str | None
              ) -> tuple[list[dict[str, Any]], list[str]]:
    if sniff(doc) != "swe-agent":
        raise _wrong(src, "swe-agent", doc)
    config = _json_value(doc.get("replay_config"))
    agent_model = ((config.get("agent") or {}).get("model") or {}) if config else {}
    model = model or agent_model.get("name") or agent_model.get("model_name")
    instance = ((config.get("problem_statement") or {}).get("id") if config else None) \
        or src.name.removesuffix(".json").removesuffix(".traj")
    msgs = []
    for m in doc["history"]:
        if not isinstance(m, dict):
            msgs.append(m)
            continue
        out = {k: m[k] for k in _KEEP if m.get(k) is not None}
        ids = m.get("tool_call_ids")
        if m.get("role") == "tool" and "tool_call_id" not in out and isinstance(ids, list) \
                and ids:
            out["tool_call_id"] = ids[0]
        msgs.append(out)
    info = doc["info"]
    stats = info.get("model_stats") or {}
    metadata: dict[str, Any] = {"model": model} if model else {}
    sent, received = stats.get("tokens_sent"), stats.get("tokens_received")
    notes = ["no pass/fail in a trajectory (the SWE-bench harness decides whether the patch "
             "resolves the issue): the run is ungraded",
             "no run time: the trajectory times only the tool executions (kept as metadata "
             "tool_execution_ms)"]
    if sent or received:
        metadata.update(total_input_tokens=sent, total_output_tokens=received)
    else:
        notes.append("model_stats report no tokens (a replayed demonstration): the token "
                     "columns stay empty")
    steps: list[float] = [t["execution_time"] for t in doc.get("trajectory") or []
                          if isinstance(t, dict)
                          and isinstance(t.get("execution_time"), int | float)]
    for key, value in (("exit_status", info.get("exit_status")),
                       ("instance_cost", stats.get("instance_cost")),
                       ("api_calls", stats.get("api_calls")),
                       ("tool_execution_ms", _ms(src, sum(steps), "the summed execution_time")
                        if steps else None)):
        if value is not None:
            metadata[key] = value
    if not model:
        notes.append("no model in the trajectory (pass --model)")
    line = {"run_id": f"swe-agent-{_safe_name(src)}", "agent": agent or "swe-agent",
            "test_case_id": str(instance),
            "response": {"final_response": _final(msgs), "messages": msgs,
                         "metadata": metadata}}
    return [line], notes


def _json_value(v: Any) -> dict[str, Any]:
    """A JSON object, or a string holding one (SWE-agent stores its config as text)."""
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except ValueError:
            return {}
    return v if isinstance(v, dict) else {}


_NOT_RESULTS = ("agent_state_changed", "null")
"""OpenHands observations that report the agent's state, not a tool's result."""


def openhands(src: Path, doc: Any, agent: str | None, model: str | None
              ) -> tuple[list[dict[str, Any]], list[str]]:
    if sniff(doc) != "openhands":
        raise _wrong(src, "openhands", doc)
    msgs: list[dict[str, Any]] = []
    seen: set[str] = set()
    models: list[str] = []
    tokens_in = tokens_out = 0
    steps_without_usage = n_responses = 0
    skipped: Counter[str] = Counter()
    for e in doc:
        meta = e.get("tool_call_metadata") if isinstance(e.get("tool_call_metadata"),
                                                          dict) else None
        response = meta.get("model_response") if meta and isinstance(
            meta.get("model_response"), dict) else None
        text = e.get("message") if isinstance(e.get("message"), str) else None
        if e.get("source") == "user" and e.get("action") == "message":
            msgs.append({"role": "user", "content": text or ""})
        elif "observation" in e and meta:
            content = e.get("content") if isinstance(e.get("content"), str) else text
            msgs.append({"role": "tool", "tool_call_id": meta.get("tool_call_id"),
                         "content": content or ""})
        elif e.get("source") == "agent" and response:
            rid = response.get("id")
            if isinstance(rid, str) and rid in seen:
                continue  # the same LLM response behind several actions
            if isinstance(rid, str):
                seen.add(rid)
            n_responses += 1
            choice = (response.get("choices") or [{}])[0]
            message = choice.get("message") if isinstance(choice, dict) else None
            if isinstance(message, dict):
                msgs.append({k: message[k] for k in ("role", "content", "tool_calls")
                             if message.get(k) is not None})
            usage = response.get("usage") or {}
            tokens_in += usage.get("prompt_tokens") or 0
            tokens_out += usage.get("completion_tokens") or 0
            if isinstance(response.get("model"), str):
                models.append(response["model"])
        elif e.get("action") == "system":
            args = e.get("args") if isinstance(e.get("args"), dict) else {}
            msgs.append({"role": "system", "content": args.get("content") or text or ""})
        elif e.get("source") == "agent" and "action" in e:
            # An agent step without its LLM response: its text, else what it did.
            args = e.get("args")
            msgs.append({"role": "assistant", "content": text or (
                f"[{e.get('action')}] " + (json.dumps(args) if args else "")).strip()})
            steps_without_usage += 1
        elif "observation" in e and e.get("observation") not in _NOT_RESULTS:
            # A result no call names: kept (the ingest flags it as an orphan).
            content = e.get("content") if isinstance(e.get("content"), str) else text
            msgs.append({"role": "tool", "content": content or ""})
        else:
            skipped[str(e.get("action") or e.get("observation"))] += 1
    stamps = [t for t in (_utc(e.get("timestamp")) for e in doc) if t]
    # The agent's time: each gap between events that ends at an agent event (waiting for the
    # user's next message is not the agent's runtime).
    busy = 0.0
    timed = [(e.get("source"), _time(e.get("timestamp"))) for e in doc]
    for (_, t0), (who, t1) in zip(timed, timed[1:], strict=False):
        if who == "agent" and t0 is not None and t1 is not None:
            busy += (t1 - t0).total_seconds()
    metadata: dict[str, Any] = {}
    model = model or (max(set(models), key=models.count) if models else None)
    if model:
        metadata["model"] = model
    notes = ["no pass/fail in an OpenHands event list: the run is ungraded",
             "event times carry no zone and are read as UTC"]
    if skipped:
        notes.append("events that are not part of the transcript left out: " + ", ".join(
            f"{n} {kind}" for kind, n in sorted(skipped.items())))
    if n_responses and not steps_without_usage:
        metadata.update(total_input_tokens=tokens_in, total_output_tokens=tokens_out)
    elif steps_without_usage:
        notes.append(f"{steps_without_usage} agent step(s) carry no LLM response, so the "
                     "run's token totals are unknown and stay empty")
    line: dict[str, Any] = {
        "run_id": f"openhands-{_safe_name(src)}", "agent": agent or "openhands",
        "test_case_id": _safe_name(src),
        "response": {"final_response": _final(msgs), "messages": msgs, "metadata": metadata}}
    if stamps:
        line["started_at"], line["ended_at"] = stamps[0], stamps[-1]
        metadata["agent_runtime_ms"] = round(busy * 1000)
    return [line], notes


def _time(ts: Any) -> datetime | None:
    value = _utc(ts)
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None
    except ValueError:
        return None


IMPORTERS: dict[str, Callable[[Path, Any, str | None, str | None],
                              tuple[list[dict[str, Any]], list[str]]]] = {
    "tau-bench": tau_bench, "tau2": tau2, "inspect": inspect_log, "langfuse": langfuse,
    "otlp": otlp, "agentops": agentops, "swe-agent": swe_agent, "openhands": openhands}
KIND_OF = {"langfuse": "spans", "otlp": "otlp", "agentops": "otlp"}
"""The landing kind each importer writes (responses unless named)."""


def _n_spans(line: Any) -> int:
    """Spans in a written line, counted as the readers will find them."""
    if not isinstance(line, dict):
        return 0
    if isinstance(line.get("spans"), list):
        return len(line["spans"])
    if "resourceSpans" in line:
        return sum(1 for _ in _export_spans(line))
    return 1


def _safe_name(src: Path) -> str:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", src.stem).strip("._") or "import"
    return stem[:120]


_INSPECT_LOG_NAME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}.*\.json")
"""A `.json` Inspect log's name (Inspect's own rule): it starts with the eval's start time,
which leaves out an eval set's `logs.json` and `eval-set.json`."""


def _expand(fmt: str, sources: list[Path]) -> list[Path]:
    """The files to convert: each file named, and for `inspect` each folder's logs (an eval
    set: every `.eval`, and every `.json` named like an Inspect log, in its subfolders too)."""
    files: list[Path] = []
    for src in sources:
        if not src.is_dir():
            files.append(src)
        elif fmt != "inspect":
            raise InputError(f"{src}: a folder; name the result files to import")
        else:
            found = sorted(p for p in src.rglob("*") if p.is_file() and not any(
                part.startswith(".") for part in p.relative_to(src).parts) and (
                p.suffix == ".eval" or _INSPECT_LOG_NAME.fullmatch(p.name)))
            if not found:
                raise InputError(f"{src}: a folder with no Inspect logs (*.eval, or *.json "
                                 "named by the eval's start time)")
            files.extend(found)
    return files


def run_import(fmt: str, sources: list[Path], out: Path, agent: str | None = None,
               model: str | None = None) -> list[ImportResult]:
    """Convert every source file, then write each one's `out/<name>.<kind>.jsonl`: all of
    them, or none when a source cannot be converted (the InputError names it and says that
    nothing was written). Each file is written aside and renamed into place."""
    if fmt not in IMPORTERS:
        raise InputError(f"unknown format {fmt!r}; runlake imports: {', '.join(IMPORTERS)}")
    files = _expand(fmt, sources)
    out.mkdir(parents=True, exist_ok=True)
    staged: list[tuple[Path, ImportResult]] = []
    try:
        for src in files:
            staged.append(_stage(fmt, src, out, {r.output for _, r in staged}, agent, model))
    except BaseException as e:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        if isinstance(e, InputError):
            raise InputError(f"{e}; nothing was written to {out}") from None
        raise
    done: list[ImportResult] = []
    for i, (tmp, result) in enumerate(staged):
        try:
            os.replace(tmp, result.output)
        except OSError as e:
            for left, _ in staged[i:]:
                left.unlink(missing_ok=True)
            wrote = ", ".join(r.output.name for r in done) or "nothing"
            raise InputError(f"{result.output}: cannot write ({e.strerror}); written before "
                             f"it: {wrote}") from None
        done.append(result)
    return done


def _stage(fmt: str, src: Path, out: Path, taken: set[Path], agent: str | None,
           model: str | None) -> tuple[Path, ImportResult]:
    """Convert one source into a hidden file of `out` (renamed into place by run_import), so
    that a source that cannot be converted leaves nothing behind."""
    doc, n_nonfinite = _load(src)
    kind = KIND_OF.get(fmt, "responses")
    try:
        lines, lacks = IMPORTERS[fmt](src, doc, agent, model)
        n = sum(_n_spans(line) for line in lines) if fmt in KIND_OF else len(lines)
    except InputError:
        raise
    except RecursionError:
        raise InputError(f"{src}: {TOO_DEEP}") from None
    except OverflowError as e:
        raise InputError(f"{src}: a number out of range ({str(e)[:120]})") from None
    except (AttributeError, KeyError, TypeError, ValueError, IndexError) as e:
        # The file has the format's outline but a part of another shape.
        raise InputError(f"{src}: not {_a(fmt)} {fmt} file runlake can read: a part has an "
                         f"unexpected shape ({type(e).__name__}: {str(e)[:120]})") from None
    try:
        # Strict JSON only: a NaN or Infinity would be quarantined by the ingest.
        text = "".join(json.dumps(line, ensure_ascii=False, allow_nan=False) + "\n"
                       for line in lines)
    except RecursionError:
        raise InputError(f"{src}: {TOO_DEEP}") from None
    except ValueError as e:  # an infinity the conversion computed (a sum of huge counts)
        raise InputError(f"{src}: a number out of range in the converted runs ({e})") from None
    if n_nonfinite:
        lacks = [*lacks, f"{n_nonfinite} NaN or Infinity value(s), which JSON does not "
                         "allow, written as null"]
    stem = _safe_name(src)
    target = out / f"{stem}.{kind}.jsonl"
    n_same = 1
    while target in taken:  # two sources with one name: never overwrite in one run
        n_same += 1
        target = out / f"{stem}-{n_same}.{kind}.jsonl"
    tmp = out / f".{target.name}.{uuid.uuid4().hex}"
    try:
        tmp.write_text(text, encoding="utf-8")
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    statuses = [(line.get("outcome") or {}).get("status") for line in lines
                if isinstance(line, dict)]
    passed = statuses.count("passed")
    graded = passed + statuses.count("failed")
    return tmp, ImportResult(src, target, n, passed, graded, lacks)
