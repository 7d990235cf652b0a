"""Response JSONL records -> rows of runs, metadata_kv and flags (transcripts: transcript.py).

One pass per record, adding rows by column name that become Arrow tables per block: no object per
row survives the block. The rules are those docs/formats.md gives for response files, the
columns those of docs/data-dictionary.md; each flag code is raised from here with a detail
saying exactly what was found. Cross-line rules (run_id_duplicate) are derived in the
warehouse (sql/intermediate/int_derived_flags.sql).
"""

import hashlib
from collections.abc import Sequence
from datetime import date
from typing import Any

from transforms.contracts.flags import CATALOG
from transforms.contracts.registry import Registry
from transforms.contracts.response import UNFINISHED
from transforms.normalize.columns import INT64_MAX, MAX_RUNTIME_MS, ColumnBuffers
from transforms.normalize.envelope import first_str, timestamp
from transforms.normalize.envelope import outcome as outcome_of
from transforms.normalize.scores import add_row as add_score
from transforms.normalize.scores import outcome_scores
from transforms.normalize.transcript import DEEP, Pending, TranscriptNormalizer
from transforms.read import jsontext
from transforms.read.dates import date_prefix
from transforms.read.readers import describe, json_type

FINAL_RESPONSE_LIMIT = 50_000
BODY_KEYS = frozenset({"final_response", "messages", "message"})
ENVELOPE_KEYS = frozenset({
    "run_id", "agent", "agent_id", "agent_name", "agent_version", "test_case_id", "case_id",
    "scenario_id", "batch_id", "trace_id", "session_id", "turn_index", "started_at", "ended_at",
    "response_contract", "outcome", "passed", "response", "model",
})
_INT_KEYS = ("total_input_tokens", "total_output_tokens")
_COMMON_KEYS = frozenset({"model", "system_prompt_id", "total_input_tokens",
                          "total_output_tokens", "agent_runtime_ms"})
_MISSING: Any = object()
NOT_A_RUN = ("a JSON object with none of the keys of a run envelope (run_id, agent, response, "
             "...) or of a response body (final_response, messages, message)")


def derived_run_id(raw: bytes) -> str:
    """A stable id for a line without run_id: a digest of the line's bytes."""
    return "derived-" + hashlib.blake2b(raw, digest_size=10).hexdigest()


class ResponseNormalizer:
    """Appends the rows of response records of one source file to column buffers."""

    def __init__(self, source_file: str, fallback_day: date, buffers: ColumnBuffers) -> None:
        self.source_file = source_file
        self.fallback_day = fallback_day
        self.days: set[date] = set()
        self._add_run = buffers.adder("runs", source_file=source_file)
        self._add_flag = buffers.adder("flags", source="response", source_file=source_file)
        self.transcript = TranscriptNormalizer(source_file, buffers)
        self._add_kv = buffers.adder("metadata_kv", source_file=source_file)
        self._add_score = buffers.adder("scores")

    def use_registry(self, registry: Registry | None) -> None:
        """Check every tool call of the runs against this tool registry."""
        self.transcript.registry = registry

    # -- flags ------------------------------------------------------------------------------
    def _flag(self, code: str, run_id: str | None, day: date, line: int, detail: str,
              message_index: int | None = None, call_index: int | None = None,
              tool_name: str | None = None, finding_key: str | None = None) -> None:
        s = CATALOG[code]
        self._add_flag(entity=s.entity, run_id=run_id, day=day, span_id=None,
                       message_index=message_index, call_index=call_index,
                       tool_name=tool_name, code=code, severity=s.severity,
                       category=s.category, detail=detail, finding_key=finding_key,
                       source_line=line)

    # -- one record -------------------------------------------------------------------------
    def add(self, line: int, raw: bytes, obj: dict[str, Any], shape: str | None = None,
            extra_flags: Sequence[tuple[str, str]] = ()) -> str | None:
        """Normalize one record; None when accepted, else why it is not a run record.
        `shape` names the record shape when another reader translated it (durable state);
        `extra_flags` are (code, detail) findings that reader made."""
        given_shape = shape
        keys = obj.keys()
        if "response" in obj:
            resp: Any = obj["response"]
            shape = "envelope"
        elif not BODY_KEYS.isdisjoint(keys):
            resp = obj
            shape = "envelope" if not ENVELOPE_KEYS.isdisjoint(keys) else "bare"
        elif not ENVELOPE_KEYS.isdisjoint(keys):
            resp = None
            shape = "envelope"
        else:
            return NOT_A_RUN
        env = obj
        pending: Pending = []
        bad: list[str] = []
        for code, detail in extra_flags:
            if code == "envelope_malformed":
                bad.append(detail)
            else:
                pending.append((code, detail, None, None))
        if given_shape is not None:
            shape = given_shape

        # identity
        rid = env.get("run_id")
        if isinstance(rid, int) and not isinstance(rid, bool):
            rid = str(rid)
        if not isinstance(rid, str) or not rid:
            why = "no run_id" if rid in (None, "") else f"run_id is {describe(rid)}"
            rid = derived_run_id(raw)
            pending.append(("run_id_missing", f"{why}; derived {rid} from the line's bytes",
                            None, None))
        agent = first_str(env, ("agent", "agent_id", "agent_name"), bad) or "unknown"
        agent_version = first_str(env, ("agent_version",), bad)
        test_case_id = first_str(env, ("test_case_id", "case_id", "scenario_id"), bad)
        batch_id = first_str(env, ("batch_id",), bad)
        trace_id = first_str(env, ("trace_id",), bad)
        session_id = first_str(env, ("session_id",), bad)
        turn_index = env.get("turn_index")
        if turn_index is not None and (isinstance(turn_index, bool)
                                       or not isinstance(turn_index, int)):
            bad.append(f"turn_index is {describe(turn_index)}, not an integer")
            turn_index = None
        elif turn_index is not None and not -INT64_MAX - 1 <= turn_index <= INT64_MAX:
            bad.append(f"turn_index {turn_index} is out of the 64-bit range")
            turn_index = None
        started_at = timestamp(env, "started_at", bad)
        ended_at = timestamp(env, "ended_at", bad)

        if started_at is not None:
            day = started_at.date()
        else:
            day = (date_prefix(batch_id) if batch_id else None) or self.fallback_day
        self.days.add(day)
        if batch_id is None:
            batch_id = day.isoformat()

        # outcome
        status, score, judge_skipped, outcome_error, explanation = outcome_of(env, bad)
        outcome = env.get("outcome")
        if isinstance(outcome, dict) and outcome.get("scores") is not None:
            problems: list[str] = []
            for i, named in enumerate(outcome_scores(outcome["scores"], problems)):
                add_score(self._add_score, named, rid, day, "response", None, None, i,
                          self.source_file, line)
            pending.extend(("score_malformed", p[:500], None, None) for p in problems[:10])

        # contract mode
        rc = env.get("response_contract")
        strict = (isinstance(rc, dict) and rc.get("response_mode") == "rich"
                  and rc.get("strictness") == "strict")

        # response body
        if not isinstance(resp, dict):
            if resp is not None:
                bad.append(f"response is {describe(resp)}, not an object")
            resp = {}
        is_turn = "message" in resp or session_id is not None or turn_index is not None
        fr: Any = _MISSING
        fr_key = "final_response"
        if resp.get("message") is not None:
            fr, fr_key = resp["message"], "message"
            if isinstance(fr, dict) and isinstance(fr.get("content"), str):
                fr = fr["content"]
        elif "final_response" in resp:
            fr = resp["final_response"]
            if is_turn and fr is not None:
                pending.append(("final_response_alias_used",
                                "turn answered with final_response instead of message",
                                None, None))
        fr_text: str | None = None
        fr_chars: int | None = None
        truncated = False
        if fr is _MISSING or fr is None:
            what = "neither message nor final_response" if is_turn else "no final_response"
            self._absent("final_response_missing", what, status, pending)
        elif not isinstance(fr, str):
            pending.append(("final_response_missing",
                            f"{fr_key} is {describe(fr)}, not a string", None, None))
        else:
            fr_chars = len(fr)
            if not fr or fr.isspace():
                self._absent("final_response_empty", f"{fr_key} is empty" if not fr else
                             f"{fr_key} is {fr_chars} whitespace characters", status, pending)
            if fr_chars > FINAL_RESPONSE_LIMIT:
                truncated = True
                pending.append(("final_response_truncated",
                                f"{fr_key} has {fr_chars} characters, over the "
                                f"{FINAL_RESPONSE_LIMIT} limit", None, None))
                fr = fr[:FINAL_RESPONSE_LIMIT]
            fr_text = fr

        tr = self.transcript
        tr.tools = tr.registry.for_agent(agent) if tr.registry is not None else None
        n_messages, n_calls, n_thinking, has_assistant_text, rich = tr.messages(
            resp.get("messages"), rid, day, line, pending)

        status_final = status or "ungraded"
        # A run that crashed or was skipped never answered: its missing reply is a consequence,
        # not a breach of the contract, and it keeps its status (so the crash is counted).
        enforced = strict and status not in UNFINISHED
        if enforced and not has_assistant_text:
            pending.append(("response_contract_violation",
                            f"rich+strict contract and no assistant message with non-empty "
                            f"text among {n_messages} messages", None, None))
            status_final = "contract_violation"
            judge_skipped = True
        elif enforced and is_turn and not self.transcript.replied_after_user:
            # Every turn must return the assistant message it generated, not only history.
            pending.append(("response_contract_violation",
                            "rich+strict contract and the turn's messages have no assistant "
                            "message with non-empty text after the last user message",
                            None, None))
            status_final = "contract_violation"
            judge_skipped = True

        session_done = resp.get("session_done", env.get("session_done"))
        if session_done is not None and not isinstance(session_done, bool):
            bad.append(f"session_done is {describe(session_done)}, not a boolean")
            session_done = None

        model, system_prompt_id, in_tok, out_tok, runtime = self._metadata(
            resp.get("metadata"), rid, day, line, pending)
        if model is None:
            # Still None: the views take the run's LLM calls' model, else 'unknown'.
            model = first_str(env, ("model",), bad)
        if bad:
            pending.append(("envelope_malformed", "; ".join(bad), None, None))

        for code, detail, mi, ci, *tool in pending:
            self._flag(code, rid, day, line, detail, mi, ci, *tool)

        self._add_run(
            run_id=rid, day=day, agent=agent, agent_version=agent_version, model=model,
            test_case_id=test_case_id, batch_id=batch_id, trace_id=trace_id,
            session_id=session_id, turn_index=turn_index, session_done=session_done,
            started_at=started_at, ended_at=ended_at, status=status_final, score=score,
            judge_skipped=judge_skipped, outcome_error=outcome_error,
            outcome_explanation=explanation,
            contract_mode="rich_strict" if strict else "lenient",
            trace_mode="rich" if rich else "thin", final_response=fr_text,
            final_response_chars=fr_chars, final_response_truncated=truncated,
            n_messages=n_messages, n_tool_calls=n_calls, n_thinking=n_thinking,
            input_tokens=in_tok, output_tokens=out_tok, agent_runtime_ms=runtime,
            system_prompt_id=system_prompt_id,
            tokens_source="metadata" if in_tok is not None or out_tok is not None else "none",
            record_shape=shape, source_line=line)
        return None

    @staticmethod
    def _absent(code: str, what: str, status: str | None, pending: Pending) -> None:
        """No answer, or an empty one: a contract finding (`code`), unless the run crashed or
        was skipped, which leaves nothing to answer (final_response_absent_unfinished)."""
        if status in UNFINISHED:
            pending.append(("final_response_absent_unfinished",
                            f"{what}; the run's outcome is {status}", None, None))
        else:
            pending.append((code, what, None, None))

    def _metadata(self, md: Any, rid: str, day: date, line: int,
                  pending: Pending
                  ) -> tuple[str | None, str | None, int | None, int | None, float | None]:
        if md is None:
            return None, None, None, None, None
        if not isinstance(md, dict):
            pending.append(("metadata_malformed",
                            f"metadata is {describe(md)}, not an object", None, None))
            return None, None, None, None, None
        wrong: list[str] = []
        out: dict[str, Any] = {}
        deep: list[str] = []
        for k, v in md.items():
            if k not in _COMMON_KEYS:
                value, too_deep = jsontext.text(v)
                if too_deep:
                    deep.append(f"metadata.{k[:60]}")
                self._add_kv(run_id=rid, day=day, key=k, value=value,
                             source_line=line)
                continue
            if v is None:
                continue
            if k in ("model", "system_prompt_id"):
                ok = isinstance(v, str)
            elif k in _INT_KEYS:
                ok = isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= INT64_MAX
            else:  # agent_runtime_ms: a number of milliseconds up to MAX_RUNTIME_MS
                ok = isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 and (
                    v <= MAX_RUNTIME_MS)
            if ok:
                out[k] = v
            else:
                number = isinstance(v, int | float) and not isinstance(v, bool)
                why = ("out of the 64-bit range" if k in _INT_KEYS and number and v > INT64_MAX
                       else f"an impossible runtime, over {MAX_RUNTIME_MS:,} ms or 31 days"
                       if k == "agent_runtime_ms" and number and v > MAX_RUNTIME_MS
                       else json_type(v))
                wrong.append(f"{k} is {jsontext.dumps(v)[:40]} ({why})")
        if wrong:
            pending.append(("metadata_malformed", "wrong type: " + "; ".join(wrong), None, None))
        if deep:
            pending.append(("metadata_malformed", f"{', '.join(deep[:3])} nested more than "
                            f"{jsontext.MAX_DEPTH} levels deep ({DEEP})", None, None))
        rt = out.get("agent_runtime_ms")
        return (out.get("model"), out.get("system_prompt_id"), out.get("total_input_tokens"),
                out.get("total_output_tokens"), float(rt) if rt is not None else None)

