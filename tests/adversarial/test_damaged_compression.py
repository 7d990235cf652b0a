"""Damaged compressed input: a corrupt or cut .gz/.zst file is listed with the reason, keeps
the lines read before the damage, never stops the other files, and is read again by the next
ingest."""

import gzip
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import zstandard
from typer.testing import CliRunner

from transforms.cli import app
from transforms.ingest import ingest

LINE = b'{"run_id": "r%d", "response": {"final_response": "answer %d"}}'
N = 20_000


def _data(n: int = N) -> bytes:
    return b"\n".join(LINE % (i, i * i) for i in range(n)) + b"\n"


def _corrupt_gzip(data: bytes) -> bytes:
    """`data` gzipped with bits of one byte of its deflate data flipped (past the middle when
    such a byte is there), so that inflating fails (zlib.error), not only the checksum."""
    packed = gzip.compress(data, mtime=0)
    for pos in [*range(len(packed) // 2, len(packed) - 8), *range(10, len(packed) // 2)]:
        for mask in (0xFF, 0x10, 0x01):
            damaged = bytearray(packed)
            damaged[pos] ^= mask
            try:
                gzip.decompress(bytes(damaged))
            except zlib.error:
                return bytes(damaged)
            except (OSError, EOFError):
                continue
    raise AssertionError("no flipped byte breaks the deflate data")


def _corrupt_zstd(data: bytes) -> bytes:
    """`data` as one zstd frame with a checksum, one byte flipped past the middle."""
    packed = bytearray(zstandard.ZstdCompressor(write_checksum=True).compress(data))
    packed[len(packed) * 3 // 4] ^= 0xFF
    with pytest.raises(zstandard.ZstdError):
        zstandard.ZstdDecompressor().decompress(bytes(packed))
    return bytes(packed)


DAMAGED = {".gz": _corrupt_gzip, ".zst": _corrupt_zstd}


def _landing(tmp_path: Path, suffix: str) -> Path:
    landing = tmp_path / "landing"
    landing.mkdir()
    (landing / "good.responses.jsonl").write_bytes(LINE % (10**9, 1) + b"\n")
    (landing / f"bad.responses.jsonl{suffix}").write_bytes(DAMAGED[suffix](_data()))
    return landing


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_a_corrupt_file_is_listed_and_the_others_read(
        suffix: str, tmp_path: Path, home: Path, query: Callable[..., Any]) -> None:
    landing = _landing(tmp_path, suffix)
    report = ingest([landing], home)
    by_name = {Path(f.source_file).name: f for f in report.files}
    bad, good = by_name[f"bad.responses.jsonl{suffix}"], by_name["good.responses.jsonl"]
    assert good.accepted == 1 and good.error is None
    assert bad.error is not None
    assert ("zlib" if suffix == ".gz" else "ZstdError") in bad.error
    assert 0 < bad.accepted < N  # the lines read before the damage are kept
    assert bad.lines == bad.accepted + bad.quarantined + bad.blank
    rows = dict(query("SELECT regexp_extract(source_file, '[^/]+$'), error FROM ingest_files"))
    assert rows["good.responses.jsonl"] is None
    assert rows[f"bad.responses.jsonl{suffix}"] == bad.error
    assert query("SELECT count(*) FROM runs") == [(bad.accepted + 1,)]


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_the_command_reads_on_and_exits_zero(suffix: str, tmp_path: Path, home: Path) -> None:
    """`runlake ingest` exits non-zero only when nothing could be read; the damaged file is
    named with its reason."""
    landing = _landing(tmp_path, suffix)
    res = CliRunner().invoke(app, ["ingest", str(landing), "--home", str(home)])
    assert res.exit_code == 0, res.output
    assert f"bad.responses.jsonl{suffix}: " in res.output


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_validate_names_the_damage(suffix: str, tmp_path: Path) -> None:
    path = tmp_path / f"bad.responses.jsonl{suffix}"
    path.write_bytes(DAMAGED[suffix](_data()))
    res = CliRunner().invoke(app, ["validate", str(path)])
    assert res.exit_code == 1, res.output
    assert isinstance(res.exception, SystemExit), res.exception
    assert "could not be read to its end" in res.output


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_a_corrupt_whole_document_is_listed(suffix: str, tmp_path: Path, home: Path) -> None:
    """A compressed *.durable.json (read whole) that is damaged is listed, not raised."""
    doc = b'{"schemaVersion": "1.1.0", "data": {"conversationHistory": [' + b", ".join(
        b'{"messages": [{"role": "user", "contents": [{"$type": "text", "text": "%d"}]}]}' % i
        for i in range(5000)) + b"]}}"
    path = tmp_path / f"state.durable.json{suffix}"
    path.write_bytes(DAMAGED[suffix](doc))
    (f,) = ingest([path], home).files
    assert f.error is not None


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_a_cut_file_is_an_error_and_read_again(suffix: str, tmp_path: Path, home: Path,
                                               query: Callable[..., Any]) -> None:
    """A file cut short (still being written, or copied in part) keeps the lines before the
    cut, says why it ended, and is not taken for unchanged by the next ingest."""
    data = _data()
    packed = gzip.compress(data) if suffix == ".gz" else \
        zstandard.ZstdCompressor(write_checksum=True).compress(data)
    path = tmp_path / f"cut.responses.jsonl{suffix}"
    path.write_bytes(packed[: len(packed) // 2])
    (f,) = ingest([path], home).files
    assert f.error is not None and f.error.startswith("EOFError")
    assert 0 < f.accepted < N
    assert query("SELECT error FROM ingest_files") == [(f.error,)]
    (again,) = ingest([path], home).files
    assert not again.skipped and again.error == f.error
    path.write_bytes(packed)  # completed: read whole
    (whole,) = ingest([path], home).files
    assert (whole.skipped, whole.error, whole.accepted) == (False, None, N)
    (later,) = ingest([path], home).files
    assert later.skipped


def test_zstd_frames_of_every_shape_read_whole(tmp_path: Path, home: Path) -> None:
    """Several frames (with and without content size or checksum), an empty frame and a
    skippable frame read as one stream, with no error."""
    data = _data(3000)
    parts = [data[:1000], data[1000:50_000], b"", data[50_000:]]
    out = zstandard.ZstdCompressor(write_checksum=True).compress(parts[0])
    out += b"\x50\x2a\x4d\x18" + (5).to_bytes(4, "little") + b"skip!"
    streamed = zstandard.ZstdCompressor(level=3, write_content_size=False)
    chunker = streamed.chunker(chunk_size=4096)
    out += b"".join(chunker.compress(parts[1])) + b"".join(chunker.finish())
    out += zstandard.ZstdCompressor().compress(parts[2])
    out += zstandard.ZstdCompressor(write_checksum=True, level=19).compress(
        parts[3] + b"\x00" * 0)
    path = tmp_path / "frames.responses.jsonl.zst"
    path.write_bytes(out)
    (f,) = ingest([path], home).files
    assert (f.error, f.lines, f.accepted) == (None, 3000, 3000)
