"""Invariants over arbitrary input bytes: every line is accounted for, whatever the blocks."""

from datetime import date
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.property import examples
from transforms.contracts.schemas import TABLES
from transforms.ingest import ingest
from transforms.lake import Lake
from transforms.normalize.worker import BlockTask, normalize_block
from transforms.read.readers import BOM, BlockReader, InputFile
from transforms.warehouse import connect

GOOD = [b'{"run_id": "a", "response": {"final_response": "ok"}}',
        b'{"final_response": "", "messages": [{"role": "tool", "tool_call_id": "x"}]}',
        b'{"run_id": "a", "response": {"final_response": "again", "messages": "no"}}',
        b"[1]", b"{", b"   ", b"", b"\xff\xfe", b'{"x": NaN}', b"\xef\xbb\xbf{}"]

lines = st.lists(st.one_of(st.sampled_from(GOOD), st.binary(max_size=40)), max_size=30)
terminators = st.sampled_from([b"\n", b"\r\n"])


def _visible_files(home: Path) -> list[tuple[str, bytes]]:
    """Every data file of every lake table at its current version, with its bytes."""
    lake = Lake(home)
    return sorted((f, Path(f).read_bytes()) for t in TABLES for f in lake.file_uris(t))


def _expected_lines(data: bytes) -> int:
    if data.startswith(BOM):
        data = data[len(BOM):]
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def _data(parts: list[bytes], term: bytes, final_newline: bool, bom: bool) -> bytes:
    data = term.join(parts) + (term if final_newline and parts else b"")
    return (BOM + data) if bom else data


@settings(max_examples=examples(300), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=lines, term=terminators, final_newline=st.booleans(), bom=st.booleans(),
       block=st.integers(min_value=1, max_value=64))
def test_every_line_accounted_for(tmp_path: Path, parts: list[bytes], term: bytes,
                                  final_newline: bool, bom: bool, block: int) -> None:
    """lines = accepted + quarantined + blank, for any bytes and any block size; the blocks'
    line numbers cover 1..lines once each."""
    data = _data(parts, term, final_newline, bom)
    path = tmp_path / "p.responses.jsonl"
    path.write_bytes(data)
    f = InputFile(path, "p.responses.jsonl", "responses", "none", len(data))
    total = accepted = quarantined = blank = 0
    seen: list[int] = []
    for i, b in enumerate(BlockReader(f, block_bytes=block)):
        res, buffers = normalize_block(BlockTask(b, f.source_file, "responses",
                                                 date(2026, 11, 21), "", str(i)))
        total += res.lines
        accepted += res.accepted
        quarantined += res.quarantined
        blank += res.blank
        seen += buffers.column("runs", "source_line") + buffers.column("quarantine",
                                                                      "line_number")
        assert buffers.rows("runs") == res.accepted
        assert buffers.rows("quarantine") == res.quarantined
    assert total == _expected_lines(data)
    assert total == accepted + quarantined + blank
    assert len(seen) == len(set(seen)) == accepted + quarantined
    assert all(1 <= n <= total for n in seen)


@settings(max_examples=examples(4), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=lines, term=terminators, final_newline=st.booleans())
def test_lake_accounting_and_idempotence(tmp_path_factory, parts: list[bytes], term: bytes,
                                         final_newline: bool) -> None:
    """Through the whole pipeline: ingest_files adds up, and ingesting again changes nothing."""
    root = tmp_path_factory.mktemp("acct")
    path = root / "in" / "p.responses.jsonl"
    path.parent.mkdir()
    path.write_bytes(_data(parts, term, final_newline, False))
    ingest([path], root / "home")
    before = _visible_files(root / "home")
    report = ingest([path], root / "home")
    assert all(f.skipped for f in report.files)
    after = _visible_files(root / "home")
    assert before == after
    con = connect(root / "home")
    lines, acc, quar, blank = con.execute(
        "SELECT lines, lines_accepted, lines_quarantined, lines_blank FROM ingest_files"
    ).fetchone()
    n_runs_lines = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    n_sup = con.execute("SELECT count(*) FROM staging.stg_superseded_runs").fetchone()[0]
    n_quar = con.execute("SELECT count(*) FROM quarantine").fetchone()[0]
    con.close()
    assert lines == acc + quar + blank == _expected_lines(path.read_bytes())
    assert n_quar == quar
    assert n_runs_lines + n_sup == acc
