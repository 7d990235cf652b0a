"""One `runlake import`, whatever the format: read each source (JSON, or an Inspect `.eval`
zip), check that it has the format's outline, convert it, and write the landing files all
or nothing."""

import json
import math
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from transforms.errors import InputError
from transforms.importers.common import (
    TOO_DEEP,
    Importer,
    ImportResult,
    Recognized,
    a_or_an,
    safe_name,
)
from transforms.importers.inspect_eval import ZIP_MAGIC, read_eval_log

Known = Sequence[Importer | Recognized]
"""The documents runlake tells apart, in the order they are tried: the first that matches
names a document."""


def load(src: Path) -> tuple[Any, int]:
    """The parsed document, and how many NaN/Infinity values it held (Python's json writes
    the constants; a number beyond a double's range, like 1e999, reads as Infinity): they
    become null, since the landing JSONL must be strict JSON. A zip archive (an Inspect
    `.eval` log) is read as the JSON log it holds."""
    nonfinite = 0

    def constant(_: str) -> None:
        nonlocal nonfinite
        nonfinite += 1

    def number(text: str) -> float | None:
        value = float(text)
        if math.isfinite(value):
            return value
        constant(text)
        return None

    try:
        with src.open("rb") as f:
            is_zip = f.read(4) == ZIP_MAGIC
        if is_zip:
            return read_eval_log(src, constant, number), nonfinite
        if src.suffix == ".eval":
            raise InputError(f"{src}: not an Inspect .eval log: not a zip archive (an .eval "
                             "log is one; a damaged or partly copied file is not)")
        return json.loads(src.read_bytes(), parse_constant=constant,
                          parse_float=number), nonfinite
    except OSError as e:
        raise InputError(f"{src}: cannot read ({e.strerror})") from None
    except RecursionError:
        raise InputError(f"{src}: {TOO_DEEP}") from None
    except ValueError as e:
        raise InputError(f"{src}: not a JSON document ({e})") from None


def sniff(doc: Any, known: Known) -> Importer | Recognized | None:
    """What a parsed JSON document looks like: the first of `known` it matches."""
    return next((k for k in known if k.matches(doc)), None)


def wrong(src: Path, fmt: str, seen: Importer | Recognized | None) -> InputError:
    """The error for a source that is not of the format asked for, naming what it is."""
    if seen is None:
        hint = "its shape matches no format runlake imports"
    elif isinstance(seen, Recognized):
        hint = seen.hint
    else:
        hint = f"it looks like {a_or_an(seen.name)} {seen.name} file: use `runlake import " \
               f"{seen.name}`"
    return InputError(f"{src}: not {a_or_an(fmt)} {fmt} file; {hint}")


def expand(importer: Importer, sources: list[Path]) -> list[Path]:
    """The files to convert: each file named, and for a format that imports folders (an
    Inspect eval set) each folder's sources."""
    files: list[Path] = []
    for src in sources:
        if not src.is_dir():
            files.append(src)
        elif importer.files_in is None:
            raise InputError(f"{src}: a folder; name the result files to import")
        else:
            files.extend(importer.files_in(src))
    return files


def convert_all(importer: Importer, known: Known, sources: list[Path], out: Path,
                agent: str | None, model: str | None) -> list[ImportResult]:
    """Convert every source file, then write each one's `out/<name>.<kind>.jsonl`: all of
    them, or none when a source cannot be converted (the InputError names it and says that
    nothing was written). Each file is written aside and renamed into place."""
    files = expand(importer, sources)
    out.mkdir(parents=True, exist_ok=True)
    staged: list[tuple[Path, ImportResult]] = []
    try:
        for src in files:
            staged.append(_stage(importer, known, src, out, {r.output for _, r in staged},
                                 agent, model))
    except BaseException as e:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        if isinstance(e, InputError):
            raise InputError(f"{e}; nothing was written to {out}") from None
        raise
    done: list[ImportResult] = []
    for i, (tmp, result) in enumerate(staged):
        try:
            os.replace(tmp, result.output)
        except OSError as e:
            for left, _ in staged[i:]:
                left.unlink(missing_ok=True)
            wrote = ", ".join(r.output.name for r in done) or "nothing"
            raise InputError(f"{result.output}: cannot write ({e.strerror}); written before "
                             f"it: {wrote}") from None
        done.append(result)
    return done


def _stage(importer: Importer, known: Known, src: Path, out: Path, taken: set[Path],
           agent: str | None, model: str | None) -> tuple[Path, ImportResult]:
    """Convert one source into a hidden file of `out` (renamed into place by convert_all),
    so that a source that cannot be converted leaves nothing behind."""
    doc, n_nonfinite = load(src)
    fmt = importer.name
    try:
        seen = sniff(doc, known)
        if seen is not importer:
            raise wrong(src, fmt, seen)
        lines, lacks = importer.convert(src, doc, agent, model)
        n = importer.count(lines)
    except InputError:
        raise
    except RecursionError:
        raise InputError(f"{src}: {TOO_DEEP}") from None
    except OverflowError as e:
        raise InputError(f"{src}: a number out of range ({str(e)[:120]})") from None
    except (AttributeError, KeyError, TypeError, ValueError, IndexError) as e:
        # The file has the format's outline but a part of another shape.
        raise InputError(f"{src}: not {a_or_an(fmt)} {fmt} file runlake can read: a part has "
                         f"an unexpected shape ({type(e).__name__}: {str(e)[:120]})") from None
    try:
        # Strict JSON only: a NaN or Infinity would be quarantined by the ingest.
        text = "".join(json.dumps(line, ensure_ascii=False, allow_nan=False) + "\n"
                       for line in lines)
    except RecursionError:
        raise InputError(f"{src}: {TOO_DEEP}") from None
    except ValueError as e:  # an infinity the conversion computed (a sum of huge counts)
        raise InputError(f"{src}: a number out of range in the converted runs ({e})") from None
    if n_nonfinite:
        lacks = [*lacks, f"{n_nonfinite} NaN or Infinity value(s), which JSON does not "
                         "allow, written as null"]
    stem = safe_name(src)
    target = out / f"{stem}.{importer.kind}.jsonl"
    n_same = 1
    while target in taken:  # two sources with one name: never overwrite in one run
        n_same += 1
        target = out / f"{stem}-{n_same}.{importer.kind}.jsonl"
    tmp = out / f".{target.name}.{uuid.uuid4().hex}"
    try:
        tmp.write_text(text, encoding="utf-8")
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    statuses = [(line.get("outcome") or {}).get("status") for line in lines
                if isinstance(line, dict)]
    passed = statuses.count("passed")
    graded = passed + statuses.count("failed")
    return tmp, ImportResult(src, target, n, passed, graded, lacks)
