"""What a verdict reads from the warehouse beyond its own table macros: a query's rows as
dicts, and the runs shown beside a verdict (their facts, response messages and tool calls),
for the nightly report and `runlake compare` alike."""

from dataclasses import dataclass
from typing import Any

import duckdb

Row = dict[str, Any]

RUN_FACTS = ("SELECT run_id, day, status, score, outcome_explanation, outcome_error, "
             "final_response, input_tokens, output_tokens, agent_runtime_ms "
             "FROM runs WHERE run_id IN (SELECT unnest(?::VARCHAR[]))")

MESSAGES = ("SELECT run_id, message_index, role, name, text, chars, tool_call_id "
            "FROM messages WHERE run_id IN (SELECT unnest(?::VARCHAR[])) "
            "AND source = 'response' ORDER BY run_id, message_index")

TOOL_CALLS = ("SELECT run_id, message_index, tool_name, coalesce(arguments, arguments_raw) "
              "AS arguments, arguments_valid, result_message_index FROM tool_calls "
              "WHERE run_id IN (SELECT unnest(?::VARCHAR[])) AND source = 'response' "
              "ORDER BY run_id, message_index, call_index")


def rows(con: duckdb.DuckDBPyConnection, sql: str,
         params: list[Any] | tuple[Any, ...] = ()) -> list[Row]:
    """A query's rows as dicts keyed by column name."""
    cur = con.execute(sql, list(params))
    names = [d[0] for d in cur.description or []]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


@dataclass
class RunDetail:
    """One run beside a flip: its facts, its response messages and their tool calls."""

    facts: Row
    messages: list[Row]
    calls: dict[int, list[Row]]
    """Tool calls by the index of the message that made them."""


def run_details(con: duckdb.DuckDBPyConnection,
                run_ids: list[str]) -> dict[str, RunDetail | None]:
    """The facts, response messages and tool calls of these runs, by run id (None for a run no
    longer in the warehouse): three queries in all."""
    out: dict[str, RunDetail | None] = dict.fromkeys(run_ids)
    if not run_ids:
        return out
    messages: dict[str, list[Row]] = {}
    for m in rows(con, MESSAGES, [run_ids]):
        messages.setdefault(m.pop("run_id"), []).append(m)
    calls: dict[str, dict[int, list[Row]]] = {}
    for c in rows(con, TOOL_CALLS, [run_ids]):
        calls.setdefault(c.pop("run_id"), {}).setdefault(c["message_index"], []).append(c)
    for facts in rows(con, RUN_FACTS, [run_ids]):
        rid = facts["run_id"]
        out[rid] = RunDetail(facts=facts, messages=messages.get(rid, []),
                             calls=calls.get(rid, {}))
    return out
