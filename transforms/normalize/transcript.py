"""A run's transcript -> rows of messages, tool_calls and thinking, with their flags.

Owns the rules for one OpenAI-style `messages` list (docs/formats.md):
roles, string/parts/null content, thinking blocks, both tool-call shapes with object or string
arguments, and the linking of each call to the tool message that answers it. Rows are appended
as tuples in the orders MESSAGE_COLUMNS, THINKING_COLUMNS and TOOL_CALL_COLUMNS declare by
name, checked against the schema when this module is imported (a keyword call per message
would slow the ingest: transforms.normalize.columns); flags go to the caller's `pending` list.
"""

from datetime import date
from hashlib import blake2b
from typing import Any

import orjson

from transforms.contracts.registry import Registry, Tool
from transforms.normalize.columns import ColumnBuffers, in_schema_order
from transforms.read import jsontext
from transforms.read.readers import describe, json_type

ROLES = frozenset({"system", "user", "assistant", "tool"})
TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})
_MISSING: Any = object()
MESSAGE_COLUMNS = in_schema_order("messages", (
    "run_id", "day", "message_index", "role", "content_kind", "text", "chars", "part_types",
    "other_parts", "n_tool_calls", "tool_call_id", "name", "n_thinking", "source", "span_id",
    "direction", "source_file", "source_line"))
"""The order of a messages row's tuple."""
THINKING_COLUMNS = in_schema_order("thinking", (
    "run_id", "day", "message_index", "block_index", "text", "chars", "span_id", "source_file",
    "source_line"))
"""The order of a thinking row's tuple."""
TOOL_CALL_COLUMNS = in_schema_order("tool_calls", (
    "run_id", "day", "message_index", "call_index", "call_id", "tool_name", "arguments",
    "arguments_raw", "arguments_valid", "arguments_chars", "call_shape", "result_message_index",
    "result_chars", "source", "span_id", "source_file", "source_line"))
"""The order of a tool_calls row (a list until its result is found, then a tuple)."""
_MESSAGE_INDEX, _CALL_INDEX, _CALL_ID, _TOOL_NAME, _RESULT_INDEX, _RESULT_CHARS = (
    TOOL_CALL_COLUMNS.index(c) for c in ("message_index", "call_index", "call_id",
                                         "tool_name", "result_message_index", "result_chars"))
DEEP = "kept whole as JSON text"
"""What becomes of a value nested deeper than orjson writes (jsontext.MAX_DEPTH), in flags."""

Pending = list[tuple[Any, ...]]
"""Flags found so far for the run: (code, detail, message_index, call_index[, tool_name[,
finding_key]])."""


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys: equal values give equal text."""
    return jsontext.dumps(value, sort=True)


def _digest(value: Any) -> str:
    return blake2b(canonical_json(value).encode(), digest_size=8).hexdigest()


def call_key(call_id: str | None, name: str | None, arguments: str | None) -> str:
    """The finding key of a tool call: the same call wherever it is seen (the run's transcript,
    or a later LLM call's prompt that repeats it) gives the same key. Ids are reused in real
    transcripts, so the name and the arguments (canonical JSON, or the text of arguments that
    are not JSON) are part of it."""
    return f"tool_call:{call_id or ''}:{_digest([name, arguments])}"


def _arguments_identity(args: Any) -> str | None:
    """Arguments as the same text whether given as an object or as JSON text (flat, nested or
    OTLP-translated calls alike); text that is not JSON as it is; None when absent."""
    if args is _MISSING or args is None:
        return None
    if isinstance(args, str):
        try:
            args = jsontext.loads(args)
        except orjson.JSONDecodeError:
            return args
    return canonical_json(args)


def message_key(m: dict[str, Any]) -> str:
    """The finding key of a message: its role, tool_call_id and content."""
    return "message:" + _digest([m.get("role"), m.get("tool_call_id"), m.get("content")])


class TranscriptNormalizer:
    """Appends the rows of transcripts read from one source file (or span) to buffers."""

    def __init__(self, source_file: str, buffers: ColumnBuffers, source: str = "response",
                 span_id: str | None = None) -> None:
        self.source_file = source_file
        self.source = source
        self.span_id = span_id
        self._messages_rows = buffers.rows_of["messages"]
        self._calls = buffers.rows_of["tool_calls"]
        self._thinking = buffers.rows_of["thinking"]
        self.replied_after_user = False
        # The tool registry and the tools the current run's agent may call (None: unchecked).
        self.registry: Registry | None = None
        self.tools: dict[str, Tool] | None = None

    def messages(self, msgs: Any, rid: str | None, day: date, line: int, pending: Pending, *,
                 roles: frozenset[str] = ROLES, direction: str | None = None,
                 first_index: int = 0, link_results: bool = True
                 ) -> tuple[int, int, int, bool, bool]:
        """Append message, tool call and thinking rows; (n_messages, n_calls, n_thinking,
        has_assistant_text, rich). Messages are numbered from `first_index`; with
        `link_results` False (an LLM call's prompt or reply, not a whole run) unanswered calls
        and orphan results are not findings."""
        if msgs is None or (isinstance(msgs, list) and not msgs):
            pending.append(("messages_missing",
                            "messages is absent" if msgs is None else "messages is []",
                            None, None))
            self.replied_after_user = False
            return 0, 0, 0, False, False
        if not isinstance(msgs, list):
            pending.append(("messages_malformed",
                            f"messages is {describe(msgs)}, not a list", None, None))
            self.replied_after_user = False
            return 0, 0, 0, False, False
        add_message = self._messages_rows.append
        add_thinking = self._thinking.append
        src, source, span_id = self.source_file, self.source, self.span_id
        dropped: list[str] = []
        broken: list[str] = []
        calls_by_id: dict[str, list[list[Any]]] = {}
        run_calls: list[list[Any]] = []
        has_text = False
        last_user = last_reply = -1
        n_msg = n_calls = n_thinking = 0
        for i, m in enumerate(msgs, first_index):
            if not isinstance(m, dict):
                dropped.append(f"entry {i} is {describe(m)}")
                continue
            role = m.get("role")
            if not isinstance(role, str) or role not in roles:
                dropped.append(f"entry {i} has role {str(role)[:30]!r}" if role is not None
                               else f"entry {i} has no role")
                continue
            content = m.get("content")
            other = None
            ptypes = None
            thoughts: list[str] = []
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
                        if isinstance(pt, str) and pt in TEXT_PART_TYPES and \
                                isinstance(pt_text, str):
                            texts.append(pt_text)
                        elif pt == "thinking" and isinstance(p.get("thinking"), str):
                            thoughts.append(p["thinking"])
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
                    other, too_deep = jsontext.text(others)
                    if too_deep:
                        broken.append(f"entry {i} content is nested more than "
                                      f"{jsontext.MAX_DEPTH} levels deep ({DEEP})")
            else:
                broken.append(f"entry {i} content is {describe(content)}")
                kind, text = "null", None
            chars = len(text) if text is not None else None
            if role == "assistant" and text and not text.isspace():
                has_text = True
                last_reply = i
            elif role == "user":
                last_user = i

            th = m.get("thinking")
            if isinstance(th, list):
                blocks = []
                for bi, block in enumerate(th):
                    bt = block.get("text") if isinstance(block, dict) else None
                    if not isinstance(bt, str):
                        bt, too_deep = jsontext.text(block)
                        if too_deep:
                            broken.append(f"entry {i} thinking block {bi} is nested more than "
                                          f"{jsontext.MAX_DEPTH} levels deep ({DEEP})")
                    blocks.append(bt)
                thoughts[:0] = blocks
            elif th is not None:
                broken.append(f"entry {i} thinking is {describe(th)}")
            for bi, bt in enumerate(thoughts):
                # THINKING_COLUMNS
                add_thinking((rid, day, i, bi, bt, len(bt), span_id, src, line))
            n_th = len(thoughts)
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
                    if link_results:
                        pending.append((
                            "tool_result_orphan",
                            f"tool message {i} answers tool_call_id {tcid[:60]!r}, which no "
                            "earlier call has" if tcid is not None else
                            f"tool message {i} has no tool_call_id", i, None,
                            m.get("name") if isinstance(m.get("name"), str) else None,
                            message_key(m)))
                else:
                    for call in waiting:
                        if call[_RESULT_INDEX] is None:
                            call[_RESULT_INDEX] = i
                            call[_RESULT_CHARS] = chars
                            break
            name = m.get("name")
            # MESSAGE_COLUMNS
            add_message((rid, day, i, role, kind, text, chars, ptypes, other, n_tc, tcid,
                         name if isinstance(name, str) else None, n_th, source, span_id,
                         direction, src, line))
            n_msg += 1

        for row in run_calls:
            if row[_RESULT_INDEX] is None and link_results:
                cid, mi, tool = row[_CALL_ID], row[_MESSAGE_INDEX], row[_TOOL_NAME][:60]
                pending.append(("tool_call_unanswered",
                                f"call {cid[:60]!r} ({tool}) in message {mi} has no tool "
                                "message answering it" if cid is not None else
                                f"call {tool} in message {mi} has no id, so no tool message "
                                "can answer it", mi, row[_CALL_INDEX], row[_TOOL_NAME],
                                call_key(*row[-1])))
            self._calls.append(tuple(row[:-1]))
        # A turn's own reply: assistant text after the last user message.
        self.replied_after_user = last_reply > last_user
        problems = dropped + broken
        if problems:
            shown = "; ".join(problems[:3]) + ("; ..." if len(problems) > 3 else "")
            pending.append(("messages_malformed",
                            f"{len(dropped)} of {len(msgs)} entries dropped, "
                            f"{len(broken)} malformed fields: {shown}", None, None))
        return n_msg, n_calls, n_thinking, has_text, not problems

    def _tool_call(self, tc: Any, rid: str | None, day: date, line: int, mi: int, ci: int,
                   pending: Pending) -> list[Any] | None:
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
            cid = tc.get("id") if isinstance(tc, dict) else None
            key = call_key(str(cid) if isinstance(cid, str | int) and not isinstance(cid, bool)
                           else None, None,
                           _arguments_identity(args) if isinstance(tc, dict)
                           else "entry " + _digest(tc))
            pending.append(("tool_call_unnamed", f"message {mi} tool call {ci} {what}; dropped",
                            mi, ci, None, key))
            return None
        call_id = tc.get("id")
        if isinstance(call_id, int) and not isinstance(call_id, bool):
            call_id = str(call_id)
        if not isinstance(call_id, str) or not call_id:
            call_id = None
        arguments: str | None = None
        raw_args: str | None = None
        valid = True
        value: Any = {}
        error: str | None = None
        if isinstance(args, str):
            try:
                value = jsontext.loads(args)
            except orjson.JSONDecodeError as e:
                valid = False
                raw_args = args
                error = f"are not JSON: {e}"
        elif args is not _MISSING and args is not None:
            value = args
        canonical: str | None = None
        if valid and args is not _MISSING and args is not None:
            canonical, too_deep = jsontext.text(value, sort=True)
            if too_deep:
                # Stored as arguments that are not JSON are (text in arguments_raw, unchecked
                # against the registry): readers that stop at orjson's depth cannot use them.
                valid = False
                raw_args = args if isinstance(args, str) else canonical
                error = f"are nested more than {jsontext.MAX_DEPTH} levels deep ({DEEP})"
            else:
                arguments = canonical
        # What the call's finding key is made of; the key is only worked out for a finding.
        identity = (call_id, name, canonical if canonical is not None else raw_args)
        if error is not None:
            pending.append(("tool_arguments_invalid_json",
                            f"arguments of {name[:60]} (message {mi}, call {ci}) {error}",
                            mi, ci, name, call_key(*identity)))
        if self.tools is not None and self.registry is not None:
            for code, detail in self.registry.check(self.tools, name, value, valid):
                pending.append((code, f"message {mi}, call {ci}: {detail}", mi, ci, name,
                                call_key(*identity)))
        # The row of tool_calls in TOOL_CALL_COLUMNS' order, with what its finding key is made
        # of last (taken off before storing).
        return [rid, day, mi, ci, call_id, name, arguments, raw_args, valid,
                len(arguments) if arguments is not None else None, shape, None, None,
                self.source, self.span_id, self.source_file, line, identity]

