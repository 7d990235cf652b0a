"""What a span inherits is resolved over its whole trace in the warehouse (int_span_agents): an
SDK exports a trace in batches, children often before their parent, so an invoke_agent span and
the chat and tool spans beneath it may sit in different lines, files and ingests."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.transforms.test_otlp import record, span
from transforms.ingest import ingest

CHAT = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4.1",
        "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 2}
TOOL = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"}


def agent(name: str) -> dict[str, Any]:
    return {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}


def _lines() -> list[tuple[str, dict[str, Any]]]:
    """One trace (a) cut into four files, children first; a trace (b) without invoke_agent; a
    parent cycle (c)."""
    return [
        # file 1: the grandchildren, read before anything above them
        ("1.otlp.jsonl", record(span("c" * 16, CHAT, parent="b" * 16),
                                span("d" * 16, TOOL, parent="c" * 16, kind=1),
                                span("f" * 16, CHAT, parent="e" * 16),
                                service="svc")),
        # file 2: a plain span between the agent and the chat; a sub-agent whose name happens to
        # be the service's (its own attribute, kept, and passed to its child in file 4)
        ("2.otlp.jsonl", record(span("b" * 16, {"step": "plan"}, parent="a" * 16, kind=1),
                                span("e" * 16, agent("svc"), parent="a" * 16, kind=1),
                                service="svc")),
        # file 3: the root invoke_agent; a span of trace b; a parent cycle in trace c
        ("3.otlp.jsonl", record(span("a" * 16, agent("planner"), kind=1),
                                span("8" * 16, CHAT, trace="b" * 32),
                                span("5" * 16, CHAT, parent="6" * 16, trace="c" * 32),
                                span("6" * 16, CHAT, parent="5" * 16, trace="c" * 32),
                                service="svc")),
        # file 4: a child of the sub-agent, and a span with its own agent attribute
        ("4.otlp.jsonl", record(span("7" * 16, CHAT, parent="e" * 16),
                                span("9" * 16, {**CHAT, "gen_ai.agent.name": "judge"},
                                     parent="c" * 16),
                                service="svc")),
    ]


EXPECTED_SPANS = [
    ("5" * 16, "svc"), ("6" * 16, "svc"),  # a cycle names no agent: service.name
    ("7" * 16, "svc"),  # the sub-agent's own name, which equals service.name
    ("8" * 16, "svc"),  # no invoke_agent in trace b
    ("9" * 16, "judge"),  # its own attribute
    ("a" * 16, "planner"), ("b" * 16, "planner"),
    ("c" * 16, "planner"), ("d" * 16, "planner"),  # two and three levels below, other files
    ("e" * 16, "svc"), ("f" * 16, "svc"),
]
EXPECTED_CALLS = [("5" * 16, "svc"), ("6" * 16, "svc"), ("7" * 16, "svc"), ("8" * 16, "svc"),
                  ("9" * 16, "judge"), ("c" * 16, "planner"), ("f" * 16, "svc")]


def test_parent_and_children_in_different_files(write_lines: Callable[..., Path], home: Path,
                                                query: Callable[..., Any]) -> None:
    paths = [write_lines([line], name=name) for name, line in _lines()]
    ingest(paths, home)
    assert query("SELECT span_id, agent FROM spans ORDER BY 1") == EXPECTED_SPANS
    assert query("SELECT span_id, agent FROM llm_calls ORDER BY 1") == EXPECTED_CALLS
    # The lake keeps what each line said on its own: the chat span c, read before its
    # ancestors, is stored with service.name; the view resolves it.
    assert query("SELECT agent FROM staging.stg_spans WHERE span_id = ?", ["c" * 16]) == [
        ("svc",)]


def test_parent_and_children_in_different_ingests(write_lines: Callable[..., Path], home: Path,
                                                  query: Callable[..., Any]) -> None:
    """Each file its own ingest, the root last: the spans already in the lake take its name."""
    for name, line in _lines():
        ingest([write_lines([line], name=name, folder=name.split(".")[0])], home)
    assert query("SELECT span_id, agent FROM spans ORDER BY 1") == EXPECTED_SPANS
    assert query("SELECT span_id, agent FROM llm_calls ORDER BY 1") == EXPECTED_CALLS
    assert query("SELECT count(*) FROM ingest_files") == [(4,)]
