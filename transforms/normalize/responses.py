"""Response JSONL records -> rows of runs, messages, tool_calls, thinking, metadata_kv and flags.

One pass per record, appending to column lists that become Arrow tables per block: no object
per row survives the block. The rules are those of spec/formats.md §1 and the definitions of
spec/warehouse.md; each flag code is raised from here with a detail saying exactly what was
found. Cross-line rules (run_id_duplicate) are applied when a day is committed (lake.py).
"""

import hashlib
from datetime import UTC, date, datetime
from typing import Any

import orjson

from transforms.flags import CATALOG
from transforms.normalize.columns import ColumnBuffers
from transforms.readers import date_prefix, describe, json_type
from transforms.schemas import TOOL_CALLS

FINAL_RESPONSE_LIMIT = 50_000
ROLES = frozenset({"system", "user", "assistant", "tool"})
TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})
OUTCOME_STATUSES = frozenset({"passed", "failed", "error", "skipped"})
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
_TC = TOOL_CALLS.names
_MESSAGE_INDEX, _CALL_INDEX, _CALL_ID, _TOOL_NAME, _RESULT_INDEX, _RESULT_CHARS = (
    _TC.index(c) for c in ("message_index", "call_index", "call_id", "tool_name",
                           "result_message_index", "result_chars"))
_SORT = orjson.OPT_SORT_KEYS


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys: equal values give equal text."""
    return orjson.dumps(value, option=_SORT).decode()


def derived_run_id(raw: bytes) -> str:
    """A stable id for a line without run_id: a digest of the line's bytes."""
    return "derived-" + hashlib.blake2b(raw, digest_size=10).hexdigest()


def _first_str(obj: dict[str, Any], keys: tuple[str, ...], bad: list[str]) -> str | None:
    for k in keys:
        v = obj.get(k)
        if v is None:
            continue
        if type(v) is str:
            if v:
                return v
            continue
        if isinstance(v, int) and not isinstance(v, bool):
            return str(v)
        bad.append(f"{k} is {describe(v)}, not a string")
    return None


def _timestamp(obj: dict[str, Any], key: str, bad: list[str]) -> datetime | None:
    v = obj.get(key)
    if v is None:
        return None
    if not isinstance(v, str):
        bad.append(f"{key} is {describe(v)}, not an RFC 3339 string")
        return None
    try:
        ts = datetime.fromisoformat(v)
    except ValueError:
        bad.append(f"{key} {v[:40]!r} is not an RFC 3339 timestamp")
        return None
    if ts.tzinfo is None:
        bad.append(f"{key} {v[:40]!r} has no UTC offset; read as UTC")
        return ts.replace(tzinfo=UTC)
    return ts.astimezone(UTC)


class ResponseNormalizer:
    """Appends the rows of response records of one source file to column buffers."""

    def __init__(self, source_file: str, fallback_day: date, buffers: ColumnBuffers) -> None:
        self.source_file = source_file
        self.fallback_day = fallback_day
        self.b = buffers
        self.days: set[date] = set()
        rows = buffers.rows_of
        self._runs = rows["runs"]
        self._flags = rows["flags"]
        self._messages_rows = rows["messages"]
        self._calls = rows["tool_calls"]
        self._thinking = rows["thinking"]
        self._kv = rows["metadata_kv"]

    # -- flags ------------------------------------------------------------------------------
    def _flag(self, code: str, run_id: str | None, day: date, line: int, detail: str,
              message_index: int | None = None, call_index: int | None = None) -> None:
        s = CATALOG[code]
        self._flags.append((s.entity, run_id, day, None, message_index, call_index, code,
                            s.severity, s.category, detail, self.source_file, line))

    # -- one record -------------------------------------------------------------------------
    def add(self, line: int, raw: bytes, obj: dict[str, Any]) -> bool:
        """Normalize one record; False when the object is not a run (caller quarantines it)."""
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
            return False
        env = obj
        pending: list[tuple[str, str, int | None, int | None]] = []
        bad: list[str] = []

        # identity
        rid = env.get("run_id")
        if isinstance(rid, int) and not isinstance(rid, bool):
            rid = str(rid)
        if not isinstance(rid, str) or not rid:
            why = "no run_id" if rid in (None, "") else f"run_id is {describe(rid)}"
            rid = derived_run_id(raw)
            pending.append(("run_id_missing", f"{why}; derived {rid} from the line's bytes",
                            None, None))
        agent = _first_str(env, ("agent", "agent_id", "agent_name"), bad) or "unknown"
        agent_version = _first_str(env, ("agent_version",), bad)
        test_case_id = _first_str(env, ("test_case_id", "case_id", "scenario_id"), bad)
        batch_id = _first_str(env, ("batch_id",), bad)
        trace_id = _first_str(env, ("trace_id",), bad)
        session_id = _first_str(env, ("session_id",), bad)
        turn_index = env.get("turn_index")
        if turn_index is not None and (isinstance(turn_index, bool)
                                       or not isinstance(turn_index, int)):
            bad.append(f"turn_index is {describe(turn_index)}, not an integer")
            turn_index = None
        started_at = _timestamp(env, "started_at", bad)
        ended_at = _timestamp(env, "ended_at", bad)

        if started_at is not None:
            day = started_at.date()
        else:
            day = (date_prefix(batch_id) if batch_id else None) or self.fallback_day
        self.days.add(day)
        if batch_id is None:
            batch_id = day.isoformat()

        # outcome
        status, score, judge_skipped, outcome_error = self._outcome(env, bad)

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
            pending.append(("final_response_missing", what, None, None))
        elif not isinstance(fr, str):
            pending.append(("final_response_missing",
                            f"{fr_key} is {describe(fr)}, not a string", None, None))
        else:
            fr_chars = len(fr)
            if not fr or fr.isspace():
                pending.append(("final_response_empty",
                                f"{fr_key} is empty" if not fr else
                                f"{fr_key} is {fr_chars} whitespace characters", None, None))
            if fr_chars > FINAL_RESPONSE_LIMIT:
                truncated = True
                pending.append(("final_response_truncated",
                                f"{fr_key} has {fr_chars} characters, over the "
                                f"{FINAL_RESPONSE_LIMIT} limit", None, None))
                fr = fr[:FINAL_RESPONSE_LIMIT]
            fr_text = fr

        n_messages, n_calls, n_thinking, has_assistant_text, rich = self._messages(
            resp.get("messages"), rid, day, line, pending)

        status_final = status or "ungraded"
        if strict and not has_assistant_text:
            pending.append(("response_contract_violation",
                            f"rich+strict contract and no assistant message with non-empty "
                            f"text among {n_messages} messages", None, None))
            status_final = "contract_violation"
            judge_skipped = True

        model, system_prompt_id, in_tok, out_tok, runtime = self._metadata(
            resp.get("metadata"), rid, day, line, pending)
        if model is None:
            model = _first_str(env, ("model",), bad) or "unknown"
        if bad:
            pending.append(("envelope_malformed", "; ".join(bad), None, None))

        for code, detail, mi, ci in pending:
            self._flag(code, rid, day, line, detail, mi, ci)

        self._runs.append((
            rid, day, agent, agent_version, model, test_case_id, batch_id, trace_id, session_id,
            turn_index, started_at, ended_at, status_final, score, judge_skipped, outcome_error,
            "rich_strict" if strict else "lenient", "rich" if rich else "thin", fr_text,
            fr_chars, truncated, n_messages, n_calls, n_thinking, in_tok, out_tok, runtime,
            system_prompt_id,
            "metadata" if in_tok is not None or out_tok is not None else "none",
            shape, self.source_file, line))
        return True

    @staticmethod
    def _outcome(env: dict[str, Any], bad: list[str]
                 ) -> tuple[str | None, float | None, bool | None, str | None]:
        status = score = judge_skipped = error = None
        out = env.get("outcome")
        if isinstance(out, dict):
            st = out.get("status")
            if st in OUTCOME_STATUSES:
                status = st
            elif st is not None:
                bad.append(f"outcome.status {str(st)[:40]!r} is not one of "
                           "passed, failed, error, skipped")
            if status is None and isinstance(out.get("passed"), bool):
                status = "passed" if out["passed"] else "failed"
            sc = out.get("score")
            if isinstance(sc, int | float) and not isinstance(sc, bool) and 0 <= sc <= 1:
                score = float(sc)
            elif sc is not None:
                bad.append(f"outcome.score {str(sc)[:40]} is not a number in 0..1")
            js = out.get("judge_skipped")
            if isinstance(js, bool):
                judge_skipped = js
            elif js is not None:
                bad.append(f"outcome.judge_skipped is {describe(js)}, not a boolean")
            err = out.get("error")
            if isinstance(err, str):
                error = err
            elif err is not None:
                error = canonical_json(err)
        elif out is not None:
            bad.append(f"outcome is {describe(out)}, not an object")
        if status is None and isinstance(env.get("passed"), bool):
            status = "passed" if env["passed"] else "failed"
        return status, score, judge_skipped, error

    def _messages(self, msgs: Any, rid: str, day: date, line: int,
                  pending: list[tuple[str, str, int | None, int | None]]
                  ) -> tuple[int, int, int, bool, bool]:
        """Append message, tool call and thinking rows; (n_messages, n_calls, n_thinking,
        has_assistant_text, rich)."""
        if msgs is None or (isinstance(msgs, list) and not msgs):
            pending.append(("messages_missing",
                            "messages is absent" if msgs is None else "messages is []",
                            None, None))
            return 0, 0, 0, False, False
        if not isinstance(msgs, list):
            pending.append(("messages_malformed",
                            f"messages is {describe(msgs)}, not a list", None, None))
            return 0, 0, 0, False, False
        add_message = self._messages_rows.append
        add_thinking = self._thinking.append
        src = self.source_file
        dropped: list[str] = []
        broken: list[str] = []
        calls_by_id: dict[str, list[list[Any]]] = {}
        run_calls: list[list[Any]] = []
        has_text = False
        n_msg = n_calls = n_thinking = 0
        for i, m in enumerate(msgs):
            if not isinstance(m, dict):
                dropped.append(f"entry {i} is {describe(m)}")
                continue
            role = m.get("role")
            if role not in ROLES:
                dropped.append(f"entry {i} has role {str(role)[:30]!r}" if role is not None
                               else f"entry {i} has no role")
                continue
            content = m.get("content")
            other = None
            ptypes = None
            if content is None:
                kind, text = "null", None
            elif isinstance(content, str):
                kind, text = "string", content
            elif isinstance(content, list):
                kind = "parts"
                texts: list[str] = []
                ptypes = []
                others: list[Any] = []
                for p in content:
                    if isinstance(p, dict):
                        pt = p.get("type")
                        ptypes.append(pt if isinstance(pt, str) else "untyped")
                        pt_text = p.get("text")
                        if pt in TEXT_PART_TYPES and isinstance(pt_text, str):
                            texts.append(pt_text)
                        else:
                            others.append(p)
                    elif isinstance(p, str):
                        ptypes.append("text")
                        texts.append(p)
                    else:
                        ptypes.append(json_type(p))
                        others.append(p)
                text = "".join(texts) if texts else None
                if others:
                    other = orjson.dumps(others).decode()
            else:
                broken.append(f"entry {i} content is {describe(content)}")
                kind, text = "null", None
            chars = len(text) if text is not None else None
            if role == "assistant" and text and not text.isspace():
                has_text = True

            n_th = 0
            th = m.get("thinking")
            if isinstance(th, list):
                for bi, block in enumerate(th):
                    bt = block.get("text") if isinstance(block, dict) else None
                    if not isinstance(bt, str):
                        bt = orjson.dumps(block).decode()
                    add_thinking((rid, day, i, bi, bt, len(bt), src, line))
                    n_th += 1
            elif th is not None:
                broken.append(f"entry {i} thinking is {describe(th)}")
            n_thinking += n_th

            n_tc = 0
            tcs = m.get("tool_calls")
            if isinstance(tcs, list):
                for ci, tc in enumerate(tcs):
                    call = self._tool_call(tc, rid, day, line, i, ci, pending)
                    if call is None:
                        continue
                    n_tc += 1
                    run_calls.append(call)
                    cid = call[_CALL_ID]
                    if cid is not None:
                        calls_by_id.setdefault(cid, []).append(call)
            elif tcs is not None:
                broken.append(f"entry {i} tool_calls is {describe(tcs)}")
            n_calls += n_tc

            tcid = m.get("tool_call_id")
            if not isinstance(tcid, str):
                tcid = None
            if role == "tool":
                # Ids are reused in real transcripts: a result answers the earliest call with
                # its id that is still unanswered.
                waiting = calls_by_id.get(tcid) if tcid is not None else None
                if waiting is None:
                    pending.append(("tool_result_orphan",
                                    f"tool message {i} answers tool_call_id {tcid[:60]!r}, "
                                    "which no earlier call has" if tcid is not None else
                                    f"tool message {i} has no tool_call_id", i, None))
                else:
                    for call in waiting:
                        if call[_RESULT_INDEX] is None:
                            call[_RESULT_INDEX] = i
                            call[_RESULT_CHARS] = chars
                            break
            name = m.get("name")
            add_message((rid, day, i, role, kind, text, chars, ptypes, other, n_tc, tcid,
                         name if isinstance(name, str) else None, n_th, "response", None, src,
                         line))
            n_msg += 1

        for row in run_calls:
            if row[_RESULT_INDEX] is None:
                cid, mi, tool = row[_CALL_ID], row[_MESSAGE_INDEX], row[_TOOL_NAME][:60]
                pending.append(("tool_call_unanswered",
                                f"call {cid[:60]!r} ({tool}) in message {mi} has no tool "
                                "message answering it" if cid is not None else
                                f"call {tool} in message {mi} has no id, so no tool message "
                                "can answer it", mi, row[_CALL_INDEX]))
            self._calls.append(tuple(row))
        problems = dropped + broken
        if problems:
            shown = "; ".join(problems[:3]) + ("; ..." if len(problems) > 3 else "")
            pending.append(("messages_malformed",
                            f"{len(dropped)} of {len(msgs)} entries dropped, "
                            f"{len(broken)} malformed fields: {shown}", None, None))
        return n_msg, n_calls, n_thinking, has_text, not problems

    def _tool_call(self, tc: Any, rid: str, day: date, line: int, mi: int, ci: int,
                   pending: list[tuple[str, str, int | None, int | None]]
                   ) -> list[Any] | None:
        """One tool call row (to be completed with its result), or None when flagged."""
        name: Any = None
        args: Any = _MISSING
        shape = "flat"
        if isinstance(tc, dict):
            fn = tc.get("function")
            if isinstance(fn, dict):
                shape = "nested"
                name = fn.get("name") or tc.get("name")
                args = fn.get("arguments", tc.get("arguments", _MISSING))
            else:
                name = tc.get("name")
                args = tc.get("arguments", _MISSING)
        if not isinstance(name, str) or not name:
            what = (f"is {describe(tc)}" if not isinstance(tc, dict)
                    else "has neither name nor function.name")
            pending.append(("tool_call_unnamed", f"message {mi} tool call {ci} {what}; dropped",
                            mi, ci))
            return None
        call_id = tc.get("id")
        if isinstance(call_id, int) and not isinstance(call_id, bool):
            call_id = str(call_id)
        if not isinstance(call_id, str) or not call_id:
            call_id = None
        arguments: str | None = None
        raw_args: str | None = None
        valid = True
        if isinstance(args, str):
            try:
                arguments = canonical_json(orjson.loads(args))
            except orjson.JSONDecodeError as e:
                valid = False
                raw_args = args
                pending.append(("tool_arguments_invalid_json",
                                f"arguments of {name[:60]} (message {mi}, call {ci}) are not "
                                f"JSON: {e}", mi, ci))
        elif args is not _MISSING and args is not None:
            arguments = canonical_json(args)
        return [rid, day, mi, ci, call_id, name, arguments, raw_args, valid,
                len(arguments) if arguments is not None else None, shape, None, None,
                "response", None, self.source_file, line]

    def _metadata(self, md: Any, rid: str, day: date, line: int,
                  pending: list[tuple[str, str, int | None, int | None]]
                  ) -> tuple[str | None, str | None, int | None, int | None, float | None]:
        if md is None:
            return None, None, None, None, None
        if not isinstance(md, dict):
            pending.append(("metadata_malformed",
                            f"metadata is {describe(md)}, not an object", None, None))
            return None, None, None, None, None
        wrong: list[str] = []
        out: dict[str, Any] = {}
        for k, v in md.items():
            if k not in _COMMON_KEYS:
                self._kv.append((rid, day, k, orjson.dumps(v).decode(), self.source_file, line))
                continue
            if v is None:
                continue
            if k in ("model", "system_prompt_id"):
                ok = isinstance(v, str)
            elif k in _INT_KEYS:
                ok = isinstance(v, int) and not isinstance(v, bool) and v >= 0
            else:
                ok = isinstance(v, int | float) and not isinstance(v, bool) and v >= 0
            if ok:
                out[k] = v
            else:
                wrong.append(f"{k} is {orjson.dumps(v).decode()[:40]} "
                             f"({json_type(v)})")
        if wrong:
            pending.append(("metadata_malformed", "wrong type: " + "; ".join(wrong), None, None))
        rt = out.get("agent_runtime_ms")
        return (out.get("model"), out.get("system_prompt_id"), out.get("total_input_tokens"),
                out.get("total_output_tokens"), float(rt) if rt is not None else None)

