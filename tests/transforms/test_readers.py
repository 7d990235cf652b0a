"""The line rule: every line becomes rows, a counted blank, or a quarantine row with a reason."""

import gzip
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import zstandard

from tests.conftest import MemoryViews
from transforms.errors import InputError
from transforms.read.discover import discover
from transforms.read.readers import Block, kind_of, parse_line, split_block

OK = b'{"run_id": "r%d", "response": {"final_response": "ok"}}'


def _counts(report: Any) -> tuple[int, int, int, int]:
    (f,) = report.files
    return f.lines, f.accepted, f.quarantined, f.blank


def test_bom_crlf_blank_and_no_final_newline(tmp_path: Path, run_ingest: Callable[..., Any],
                                             query: Callable[..., Any]) -> None:
    """A BOM is dropped, CRLF ends lines, blank lines are counted, a last line needs no \\n."""
    path = tmp_path / "x.responses.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + (OK % 1) + b"\r\n\r\n   \t\r\n" + (OK % 2) + b"\r\n"
                     + (OK % 3))
    report = run_ingest(path)
    assert _counts(report) == (5, 3, 0, 2)
    assert query("SELECT run_id, source_line FROM runs ORDER BY 1") == [
        ("r1", 1), ("r2", 4), ("r3", 5)]


@pytest.mark.parametrize(("raw", "code"), [
    (b'{"run_id": "x", "response": {"final_response": "caf\xe9"}}', "invalid_utf8"),
    (b'{"run_id": "x"\x00}', "nul_byte"),
    (b'{"run_id": "x", "response": {"final_response": "cut', "invalid_json"),
    (b'{"run_id": "x", "score": NaN}', "invalid_json"),
    (b'{"run_id": "x", "score": Infinity}', "invalid_json"),
    (b'{"run_id": "x", "response": {"final_response": "\\ud800"}}', "invalid_json"),
    (b'["a", "list"]', "not_an_object"),
    (b'"just a string"', "not_an_object"),
    (b"42", "not_an_object"),
    (b'{"instance_id": "x", "model_patch": "diff"}', "unrecognized_record"),
])
def test_quarantine_codes(raw: bytes, code: str, tmp_path: Path, views: MemoryViews) -> None:
    """Each bad line lands in quarantine whole, with its code, line number and byte offset."""
    path = tmp_path / "x.responses.jsonl"
    path.write_bytes((OK % 1) + b"\n" + raw + b"\n")
    views.load(path)
    assert views("SELECT lines, lines_accepted, lines_quarantined, lines_blank "
                 "FROM ingest_files") == [(2, 1, 1, 0)]
    assert views("SELECT line_number, byte_offset, error_code, raw FROM quarantine") == [
        (2, len(OK % 1) + 1, code, raw)]


def test_json_rule_duplicate_keys_and_big_integers() -> None:
    """A duplicate key keeps its last value; integers beyond 64 bits keep every digit."""
    obj, code, _ = parse_line(b'{"a": 1, "a": 2, "big": 123456789012345678901234567890, '
                              b'"low": -9223372036854775809, "f": 1.5e300}')
    assert code is None
    assert obj == {"a": 2, "big": 123456789012345678901234567890,
                   "low": -9223372036854775809, "f": 1.5e300}


def test_escaped_nul_is_text(tmp_path: Path, views: MemoryViews) -> None:
    """An escaped \\u0000 is valid JSON: the text keeps the character."""
    path = tmp_path / "x.responses.jsonl"
    path.write_bytes(b'{"run_id": "n", "response": {"final_response": "a\\u0000b"}}\n')
    views.load(path)
    assert views("SELECT final_response, final_response_chars FROM runs") == [("a\x00b", 3)]


def test_lines_of_several_megabytes(tmp_path: Path, run_ingest: Callable[..., Any],
                                    query: Callable[..., Any]) -> None:
    """A 6 MB line crosses many read blocks and still reads as one run."""
    text = "x" * (6 * 1024 * 1024)
    path = tmp_path / "x.responses.jsonl"
    path.write_bytes((OK % 1) + b"\n" + b'{"run_id": "big", "response": {"final_response": "'
                     + text.encode() + b'"}}\n' + (OK % 3) + b"\n")
    report = run_ingest(path, block_bytes=1024 * 1024)
    assert _counts(report) == (3, 3, 0, 0)
    assert query("SELECT run_id, final_response_chars, source_line FROM runs ORDER BY 3") == [
        ("r1", 2, 1), ("big", len(text), 2), ("r3", 2, 3)]


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_compressed_files(suffix: str, tmp_path: Path, run_ingest: Callable[..., Any],
                          query: Callable[..., Any]) -> None:
    """.gz and .zst read like plain files; sha256 and bytes describe the stored file."""
    data = b"\n".join(OK % i for i in range(50)) + b"\n"
    packed = gzip.compress(data) if suffix == ".gz" else zstandard.ZstdCompressor().compress(data)
    path = tmp_path / f"x.responses.jsonl{suffix}"
    path.write_bytes(packed)
    report = run_ingest(path)
    assert _counts(report) == (50, 50, 0, 0)
    import hashlib

    assert query("SELECT compression, bytes, sha256 FROM ingest_files") == [
        ("gzip" if suffix == ".gz" else "zstd", len(packed), hashlib.sha256(packed).hexdigest())]


def test_cut_gzip_keeps_what_was_read(tmp_path: Path, run_ingest: Callable[..., Any],
                                      query: Callable[..., Any]) -> None:
    """A gzip file cut short keeps the lines before the cut and says why it ended."""
    data = b"\n".join(OK % i for i in range(2000)) + b"\n"
    path = tmp_path / "x.responses.jsonl.gz"
    packed = gzip.compress(data)
    path.write_bytes(packed[: len(packed) // 2])
    report = run_ingest(path)
    (f,) = report.files
    assert f.error is not None and "EOFError" in f.error
    assert 0 < f.accepted < 2000
    assert f.lines == f.accepted + f.quarantined + f.blank
    assert query("SELECT error IS NOT NULL FROM ingest_files") == [(True,)]


def test_kinds_by_name_and_folder(tmp_path: Path) -> None:
    """Kind comes from the name, else from a kind-named folder; other files have none."""
    assert kind_of(Path("a/b.responses.jsonl.gz")) == "responses"
    assert kind_of(Path("a/b.spans.jsonl")) == "spans"
    assert kind_of(Path("x/responses/2026-11-21/b.jsonl")) == "responses"
    assert kind_of(Path("x/b.jsonl")) is None
    assert kind_of(Path("responses/notes.txt")) is None


def test_one_list_of_kinds() -> None:
    """The kinds a file name, a folder or --kind can give, and the kinds the worker has a
    normalizer for, are one list: transforms.kinds.INPUT_FORMATS (KINDS, READABLE_KINDS and
    the suffixes follow it; the CLI's --kind choices are checked against it)."""
    from transforms.kinds import INPUT_FORMATS
    from transforms.read import readers

    assert tuple(INPUT_FORMATS) == readers.KINDS
    assert set(readers.READABLE_KINDS) <= set(readers.KINDS)
    for name, fmt in INPUT_FORMATS.items():
        for suffix in fmt.suffixes:
            assert kind_of(Path("landing/x" + suffix)) == name
            assert kind_of(Path("landing/x" + suffix + ".zst")) == name
        assert kind_of(Path(f"landing/{name}/x.jsonl")) == name


def test_unknown_kind_is_reported_not_skipped(tmp_path: Path, run_ingest: Callable[..., Any],
                                              query: Callable[..., Any]) -> None:
    """A data file whose kind cannot be told is listed in ingest_files with the reason."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.responses.jsonl").write_bytes((OK % 1) + b"\n")
    (tmp_path / "in" / "mystery.jsonl").write_bytes(b"{}\n")
    (tmp_path / "in" / "README.md").write_text("not data")
    report = run_ingest(tmp_path / "in")
    assert [(f.source_file.rsplit("/", 1)[-1], f.kind) for f in report.files] == [
        ("a.responses.jsonl", "responses"), ("mystery.jsonl", None)]
    assert query("SELECT kind, lines, error LIKE 'kind unknown%' FROM ingest_files "
                 "ORDER BY source_file") == [("responses", 1, None), ("unknown", 0, True)]


def test_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file or folder"):
        discover([tmp_path / "nope"])


def test_split_block_offsets() -> None:
    """Byte offsets point at each line's first byte; terminators are not part of the line."""
    block = Block(b"ab\r\n\ncd", first_line=10, first_offset=100, is_file_start=False)
    assert list(split_block(block)) == [(10, 100, b"ab"), (11, 104, b""), (12, 105, b"cd")]


def test_names_in_any_case_and_unread_compressions_are_listed(tmp_path: Path) -> None:
    """A folder walk reads UPPER.RESPONSES.JSONL and .GZ, and lists data files it cannot read
    (.bz2, .xz) with the reason, rather than passing over them."""
    import gzip

    from transforms.ingest import ingest

    line = b'{"run_id": "r1", "response": {"final_response": "ok"}}\n'
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "UPPER.RESPONSES.JSONL").write_bytes(line)
    (tmp_path / "in" / "b.responses.jsonl.GZ").write_bytes(
        gzip.compress(line.replace(b"r1", b"r2")))
    (tmp_path / "in" / "c.responses.jsonl.bz2").write_bytes(b"BZh9")
    (tmp_path / "in" / "notes.txt").write_text("not data")
    report = ingest([tmp_path / "in"], tmp_path / "home")
    got = {Path(f.source_file).name: (f.kind, f.accepted, f.error) for f in report.files}
    assert got == {
        "UPPER.RESPONSES.JSONL": ("responses", 1, None),
        "b.responses.jsonl.GZ": ("responses", 1, None),
        "c.responses.jsonl.bz2": (None, 0, ".bz2 compression is not read: recompress as .gz "
                                           "or .zst")}
