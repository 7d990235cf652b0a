"""Each row of a response line's messages, tool calls, thinking and metadata is written once:
the staged file is what lake/<table> shows (a hard link here), unless a line in it lost to a
later line with its run_id, or a row names no run; and a night does not rewrite the files of
the nights before it."""

import os
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from transforms.forget import forget
from transforms.ingest import ingest
from transforms.lake import Lake, lines_path
from transforms.lake import commit as lakecommit
from transforms.warehouse.linked import COMPUTED, LINK, LINKED


def _run(run_id: str, day: date, text: str) -> dict[str, Any]:
    return {"run_id": run_id, "agent": "a", "model": "gpt-4o",
            "started_at": f"{day.isoformat()}T10:00:00Z",
            "outcome": {"status": "passed"},
            "response": {"final_response": text, "messages": [
                {"role": "user", "content": f"ask {run_id}"},
                {"role": "assistant", "content": None, "thinking": [
                    {"type": "thinking", "text": "look it up"}],
                 "tool_calls": [{"id": "c1", "name": "lookup", "arguments": {"q": run_id}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "found"},
                {"role": "assistant", "content": text}],
                "metadata": {"model": "gpt-4o", "region": "eu"}}}


def _files(home: Path, table: str) -> dict[str, str]:
    """path -> kind (link, computed) of lake/<table>'s files in its newest version."""
    dt = Lake(home).open(table)
    paths = pa.table(dt.get_add_actions(flatten=True)).column("path").to_pylist()
    return {p: "link" if p.rsplit("/", 1)[-1].startswith(LINK) else
            "computed" if p.rsplit("/", 1)[-1].startswith(COMPUTED) else "other"
            for p in paths}


def test_a_response_nights_rows_are_the_staged_files_themselves(
        write_lines: Callable[..., Path], run_ingest: Callable[..., Any], home: Path,
        query: Callable[..., list[tuple[Any, ...]]]) -> None:
    day = date(2026, 11, 18)
    run_ingest(write_lines([_run(f"r{i}", day, f"answer {i}") for i in range(20)]))
    lake = Lake(home)
    snap = lake.tables_at()
    for t in LINKED:
        files = _files(home, t)
        assert set(files.values()) == {"link"}, (t, files)
        staged = lake.file_uris(lines_path(t), snap[lines_path(t)])
        shown = lake.file_uris(t, snap[t])
        # The same bytes on disk, not a copy: each file shown is a staged file.
        assert len(shown) == len(staged) == 1
        assert os.path.samefile(shown[0], staged[0])
    assert query("SELECT count(*), count(DISTINCT run_id) FROM messages") == [(80, 20)]
    assert query("SELECT count(*) FROM tool_calls WHERE tool_name = 'lookup'") == [(20,)]
    assert query("SELECT count(*) FROM thinking") == [(20,)]
    assert query("SELECT count(*) FROM metadata_kv WHERE key = 'region'") == [(20,)]


def test_a_line_that_loses_is_unlinked_and_comes_back_when_its_winner_is_forgotten(
        write_lines: Callable[..., Path], run_ingest: Callable[..., Any], home: Path,
        query: Callable[..., list[tuple[Any, ...]]]) -> None:
    day = date(2026, 11, 18)
    first = write_lines([_run("r1", day, "old answer"), _run("r2", day, "kept")],
                        name="a.responses.jsonl")
    run_ingest(first)
    second = write_lines([_run("r1", day, "new answer")], name="b.responses.jsonl")
    run_ingest(second)
    # b's line is read after a's: it wins r1; a's file is shown through derived rows.
    assert query("SELECT text FROM messages WHERE run_id = 'r1' AND message_index = 3") == [
        ("new answer",)]
    assert query("SELECT count(*) FROM messages") == [(8,)]
    kinds = _files(home, "messages")
    assert sorted(kinds.values()) == ["computed", "link"]
    forget([second], home)
    assert query("SELECT text FROM messages WHERE run_id = 'r1' AND message_index = 3") == [
        ("old answer",)]
    assert query("SELECT count(*) FROM messages") == [(8,)]
    assert set(_files(home, "messages").values()) == {"link"}


def test_a_night_leaves_the_files_of_the_nights_before_it_as_they_are(
        write_lines: Callable[..., Path], run_ingest: Callable[..., Any], home: Path,
        query: Callable[..., list[tuple[Any, ...]]]) -> None:
    sunday = date(2026, 11, 22)
    for k in range(6, -1, -1):  # a week of nights, Monday to Sunday
        night = sunday - timedelta(days=k)
        run_ingest(write_lines([_run(f"{night}-{i}", night, "ok") for i in range(5)],
                               name=f"{night}.responses.jsonl", folder=f"landing/{night}"))
    before = _files(home, "messages")
    monday = sunday + timedelta(days=1)
    run_ingest(write_lines([_run(f"{monday}-{i}", monday, "ok") for i in range(5)],
                           name=f"{monday}.responses.jsonl", folder=f"landing/{monday}"))
    after = _files(home, "messages")
    # Every file of the week before is still there as it was; the night added its own.
    assert set(before) <= set(after)
    assert len(after) == len(before) + 1
    assert query("SELECT count(*) FROM messages") == [(8 * 5 * 4,)]
    rows = sum(pq.read_metadata(f).num_rows for f in Lake(home).file_uris("messages"))
    assert rows == 8 * 5 * 4


def test_files_compacted_after_a_derive_are_shown_again_by_the_next_night(
        write_lines: Callable[..., Path], run_ingest: Callable[..., Any], home: Path,
        query: Callable[..., list[tuple[Any, ...]]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Compaction runs after the derive: the linked files of the month it merged are gone at
    the next night, whose derive shows their rows from the merged file."""
    monkeypatch.setattr(lakecommit, "COMPACT_FILES", 2)
    days = [date(2026, 11, 21) + timedelta(days=k) for k in range(3)]  # two weeks, one month
    for night in days:
        run_ingest(write_lines([_run(f"{night}-{i}", night, "ok") for i in range(3)],
                               name=f"{night}.responses.jsonl", folder=f"landing/{night}"))
    lake = Lake(home)
    staged = lake.file_uris(lines_path("messages"), lake.tables_at()[lines_path("messages")])
    assert len(staged) < len(days)  # merged after a derive
    assert query("SELECT count(*) FROM messages") == [(3 * 3 * 4,)]
    later = date(2026, 12, 10)  # a week the nights before are not within reach of
    run_ingest(write_lines([_run(f"{later}-{i}", later, "ok") for i in range(3)],
                           name=f"{later}.responses.jsonl", folder=f"landing/{later}"))
    assert query("SELECT count(*) FROM messages") == [(4 * 3 * 4,)]
    shown = sum(pq.read_metadata(f).num_rows for f in Lake(home).file_uris("messages"))
    assert shown == 4 * 3 * 4


def test_weeks_a_crashed_derive_rewrote_are_derived_again(
        write_lines: Callable[..., Path], home: Path, monkeypatch: pytest.MonkeyPatch,
        query: Callable[..., list[tuple[Any, ...]]]) -> None:
    """An ingest that dies after its derive and before its manifest commit leaves derived
    weeks readers never saw; the next ingest (of a file changed meanwhile) derives them again.
    Before, r2's messages were shown twice (linked, and derived by the ingest that died)."""
    day, far = date(2026, 11, 18), date(2026, 12, 23)
    first = write_lines([_run("r1", day, "old"), _run("r2", day, "kept")],
                        name="a.responses.jsonl")
    ingest([first], home)
    second = write_lines([_run("r1", far, "new")], name="b.responses.jsonl")  # b wins r1

    def dying(*args: Any, **kw: Any) -> Any:
        raise OSError("killed after the derive")

    monkeypatch.setattr(Lake, "maintain", dying)
    with pytest.raises(OSError):
        ingest([second], home)
    monkeypatch.undo()
    write_lines([_run("r3", far, "other")], name="b.responses.jsonl")  # b corrected
    ingest([second], home)
    assert query("SELECT run_id, count(*) FROM messages GROUP BY 1 ORDER BY 1") == [
        ("r1", 4), ("r2", 4), ("r3", 4)]
