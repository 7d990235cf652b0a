"""What `runlake validate` says of an input file: for each line that would not become clean
rows, why, field by field (the contract's fields first, then what the file's reader finds
beyond them), read through the same line loop as the ingest
(transforms.normalize.worker.records)."""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from typing import Any

from transforms.contracts.flags import CATALOG
from transforms.contracts.schemas import TABLES
from transforms.kinds import INPUT_FORMATS
from transforms.normalize.columns import ColumnBuffers
from transforms.normalize.worker import records, tripped
from transforms.read.readers import BlockReader, InputFile

MAX_PROBLEMS = 5
"""At most this many problems are told per line."""


@dataclass
class Finding:
    source_file: str
    line: int | None
    """The line number, or None for the file as a whole (it cannot be read, or not to its
    end)."""
    problems: list[str]


def check(f: InputFile) -> Iterator[Finding]:
    """The lines of `f` that break the contracts, and what stops it being read whole."""
    try:
        reader = BlockReader(f)
    except OSError as e:  # as the ingest does: named with the reason, the others read
        yield Finding(f.source_file, None, [f"cannot read the file: {e.strerror or e}"])
        return
    kind = f.kind or "responses"
    for block in reader:
        for line_no, _, line, obj, code, message in records(block):
            if obj is None and code is None:
                continue  # blank
            problems = [f"{code}: {message}"] if obj is None else explain(kind, f.source_file,
                                                                          line_no, line, obj)
            if problems:
                yield Finding(f.source_file, line_no, problems[:MAX_PROBLEMS])
    if reader.error:  # a cut or corrupt compressed stream: what was read is above
        yield Finding(f.source_file, None,
                      [f"the file could not be read to its end ({reader.error})"])


def explain(kind: str, source_file: str, line_no: int, line: bytes, obj: Any) -> list[str]:
    """Why one record breaks the contracts: the contract's own fields for response and span
    lines, then what the reader of its kind finds beyond them."""
    from transforms.contracts.response import explain as explain_response
    from transforms.contracts.spans import explain_span_line

    fields = explain_span_line(obj) if kind == "spans" else \
        explain_response(obj) if kind == "responses" else []
    by_reader = _by_reader(kind, source_file, line_no, line, obj)
    return fields + [p for p in by_reader
                     if not fields or not p.startswith("unrecognized_record")]


def _by_reader(kind: str, source_file: str, line_no: int, line: bytes,
               obj: Any) -> list[str]:
    """What the reader of a file says of one record: why it would be quarantined, else its
    contract findings (warnings and errors) as `code: detail`."""
    buffers = ColumnBuffers()
    try:
        norm = INPUT_FORMATS[kind].normalizer(source_file, date.today(), buffers)
        reason = norm.add(line_no, line, obj)
    except Exception as e:  # noqa: BLE001 - as the ingest does: the line, never a traceback
        reason = tripped(e)
    if reason is not None:
        return [f"unrecognized_record: {reason}"]
    code_i, detail_i = (TABLES["flags"].names.index(c) for c in ("code", "detail"))
    return [f"{r[code_i]}: {r[detail_i]}" for r in buffers.rows_of["flags"]
            if CATALOG[r[code_i]].category == "contract"
            and CATALOG[r[code_i]].severity != "info"]
