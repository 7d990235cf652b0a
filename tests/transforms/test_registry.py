"""The tool registry: clear errors for bad registry files, findings with the JSON path of the
first error, the views that show them, and re-reading files when the registry changes."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from transforms.cli import app
from transforms.contracts.registry import load
from transforms.errors import InputError
from transforms.ingest import ingest

CASES = Path(__file__).parent.parent / "cases"


def fn(name: str, params: Any, strict: bool = False) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": params,
                                             "strict": strict}}


@pytest.mark.parametrize("content,message", [
    ("agent: [", "not valid YAML"),
    ("a: [{type: function, function: {name: x, name: y}}]",
     "not valid YAML: the key 'name' is given twice in one mapping"),
    ("[1, 2]", "an object of agent name"),
    ("a: {not: a list}", "must be a list of function tools"),
    ("a: [{type: function, function: {parameters: {}}}]", "function.name is missing"),
    ("a: [{type: function, function: {name: x, parameters: {type: 7}}}]",
     "not a valid JSON schema"),
    ("a: [{type: function, function: {name: x, strict: true, parameters: {type: object, "
     "additionalProperties: true}}}]", "strict mode rejects"),
    ("a: [{type: function, function: {name: x}}, {type: function, function: {name: x}}]",
     "registered twice"),
])
def test_bad_registry_files_say_what_is_wrong(tmp_path: Path, content: str,
                                              message: str) -> None:
    path = tmp_path / "tools.yaml"
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        load(path)


def test_cli_reports_a_bad_registry(tmp_path: Path, write_lines: Callable[..., Path],
                                    home: Path) -> None:
    bad = tmp_path / "tools.json"
    bad.write_text("{")
    res = CliRunner().invoke(app, ["ingest", str(write_lines([{"run_id": "r"}])), "--home",
                                   str(home), "--tools", str(bad)])
    assert res.exit_code == 2 and "not valid JSON" in res.output
    res = CliRunner().invoke(app, ["ingest", str(write_lines([{"run_id": "r"}])), "--home",
                                   str(home), "--tools", str(tmp_path / "missing.yaml")])
    assert res.exit_code == 2 and "cannot read the tool registry" in res.output


def _run(rid: str, day: str, *calls: tuple[str, Any]) -> dict[str, Any]:
    msgs: list[dict[str, Any]] = []
    for i, (name, args) in enumerate(calls):
        msgs.append({"role": "assistant", "tool_calls": [{"id": f"c{i}", "name": name,
                                                          "arguments": args}]})
        msgs.append({"role": "tool", "tool_call_id": f"c{i}", "content": "ok"})
    msgs.append({"role": "assistant", "content": "done"})
    return {"run_id": rid, "agent": "tooled-agent", "model": "m",
            "started_at": f"{day}T10:00:00Z", "outcome": {"status": "passed"},
            "response": {"final_response": "done", "messages": msgs}}


def test_findings_in_the_views(write_lines: Callable[..., Path], home: Path,
                               query: Callable[..., Any]) -> None:
    lines = [_run("r1", "2026-11-20", ("lookup", {"id": "R1", "fields": ["seat", 3]}),
                  ("book_flight", {"origin": "JFK", "destination": "MAD", "passengers": 1,
                                   "seat": "1A"}),
                  ("cancel", {})),
             _run("r2", "2026-11-20", ("lookup", {"id": "R2"}))]
    ingest([write_lines(lines)], home, tools=CASES / "tools.yaml")
    details = dict(query("SELECT code, detail FROM flags"))
    assert "$.fields[1]" in details["tool_arguments_schema_violation"]
    assert "'seat'" in details["tool_arguments_strict_violation"]
    assert "cancel is not registered" in details["tool_unknown"]
    rows = query("SELECT tool_name, n_calls, n_runs_using, n_unknown_tool_calls, "
                 "n_schema_violations, n_strict_violations, is_registered, call_share "
                 "FROM v_tool_frequency ORDER BY tool_name")
    assert rows == [("book_flight", 1, 1, 0, 0, 1, True, 0.25),
                    ("cancel", 1, 1, 1, 0, 0, False, 0.25),
                    ("lookup", 2, 2, 0, 1, 0, True, 0.5)]
    assert query("SELECT code, n_findings FROM v_flag_summary WHERE code LIKE 'tool_%' "
                 "ORDER BY 1") == [("tool_arguments_schema_violation", 1),
                                   ("tool_arguments_strict_violation", 1),
                                   ("tool_unknown", 1)]


def test_registered_tools_never_called_show_with_zero_calls(
        write_lines: Callable[..., Path], home: Path, query: Callable[..., Any]) -> None:
    ingest([write_lines([_run("r1", "2026-11-20", ("lookup", {"id": "R1"}))])], home,
           tools=CASES / "tools.yaml")
    assert query("SELECT tool_name, n_calls, calls_per_run, call_share, is_registered "
                 "FROM v_tool_frequency ORDER BY tool_name") == [
        ("book_flight", 0, 0.0, 0.0, True), ("lookup", 1, 1.0, 1.0, True)]


def test_a_changed_registry_reads_files_again(write_lines: Callable[..., Path], home: Path,
                                              tmp_path: Path, query: Callable[..., Any]) -> None:
    path = write_lines([_run("r1", "2026-11-20", ("cancel", {}))])
    assert not ingest([path], home).files[0].skipped
    assert query("SELECT count(*) FROM flags") == [(0,)]
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps({"*": [fn("lookup", {"type": "object"})]}))
    assert not ingest([path], home, tools=tools).files[0].skipped
    assert query("SELECT code FROM flags") == [("tool_unknown",)]
    assert ingest([path], home, tools=tools).files[0].skipped
    tools.write_text(json.dumps({"*": [fn("lookup", {"type": "object"}), fn("cancel", {})]}))
    assert not ingest([path], home, tools=tools).files[0].skipped
    assert query("SELECT count(*) FROM flags") == [(0,)]


def test_a_damaged_stored_registry_is_a_clear_error(write_lines: Callable[..., Path],
                                                     home: Path) -> None:
    """The registry the last ingest stored is read whole by runlake: a file that is no
    Parquet any more stops the build with one line that names it, and the next ingest with a
    registry writes it again."""
    from transforms import warehouse
    from transforms.errors import WarehouseError

    path = write_lines([_run("r1", "2026-11-20", ("lookup", {"id": "R1"}))])
    ingest([path], home, tools=CASES / "tools.yaml")
    stored = home / "lake" / "_registry" / "tools.parquet"
    stored.write_bytes(b"not parquet")
    with pytest.raises(WarehouseError, match=r"tools\.parquet \(the tool registry of the last "
                       r"ingest\) cannot be read"):
        warehouse.build(home)
    ingest([write_lines([_run("r2", "2026-11-21", ("lookup", {"id": "R2"}))],
                        name="b.responses.jsonl")], home, tools=CASES / "tools.yaml")
    con = warehouse.connect(home)
    try:
        assert con.execute("SELECT count(*) FROM staging.stg_tool_registry").fetchone()[0] > 0
    finally:
        con.close()
