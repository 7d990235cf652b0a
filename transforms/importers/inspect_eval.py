"""Inspect's `.eval` log, the zip archive Inspect writes by default, read as the document its
`.json` form holds: members read into memory by name, never extracted, each inflated only up
to a limit (a guard against zip bombs)."""

import json
import re
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from transforms.errors import InputError
from transforms.importers.common import TOO_DEEP

ZIP_MAGIC = b"PK\x03\x04"
EVAL_MEMBER_LIMIT = 512 * 1024 * 1024
"""Bytes one member of an `.eval` zip may inflate to (a guard against zip bombs)."""
EVAL_TOTAL_LIMIT = 2 * 1024 * 1024 * 1024
"""Bytes all the members read from one `.eval` zip may inflate to."""
EVAL_MAX_MEMBERS = 200_000
_ZIP_ZSTD = 93
"""Zip method id of zstandard: recent Inspect versions (0.3.285 does) write their `.eval`
members with it (older ones deflate them); Python's zipfile reads it only from 3.14."""
_EVAL_SAMPLE = re.compile(r"samples/[^/]+\.json")


def _member_name(name: str) -> str:
    """A zip member's name as shown in a message: quoted and cut, never used as a path."""
    return repr(name[:80] + ("..." if len(name) > 80 else ""))


def read_member(src: Path, z: zipfile.ZipFile, info: zipfile.ZipInfo, budget: int) -> bytes:
    """One member's bytes, inflated at most to `budget` (never beyond EVAL_MEMBER_LIMIT)."""
    name = _member_name(info.filename)
    limit = min(EVAL_MEMBER_LIMIT, budget)
    if info.flag_bits & 0x1:
        raise InputError(f"{src}: member {name} is encrypted; runlake reads unencrypted "
                         ".eval logs")
    if info.file_size > limit:
        raise InputError(f"{src}: member {name} inflates to {info.file_size:,} bytes, over "
                         f"the {limit:,}-byte limit runlake reads from one .eval log")
    if info.compress_type in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        with z.open(info) as f:
            data = f.read(limit + 1)
    elif info.compress_type == _ZIP_ZSTD:
        import zstandard

        assert z.fp is not None
        z.fp.seek(info.header_offset)
        local = z.fp.read(30)
        if len(local) != 30 or local[:4] != ZIP_MAGIC:
            raise zipfile.BadZipFile(f"bad local header of member {name}")
        skip = int.from_bytes(local[26:28], "little") + int.from_bytes(local[28:30], "little")
        z.fp.seek(info.header_offset + 30 + skip)
        raw = z.fp.read(info.compress_size)
        reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
        chunks, size = [], 0
        while size <= limit:
            chunk = reader.read(1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        data = b"".join(chunks)
        if len(data) <= limit and zlib.crc32(data) != info.CRC:
            raise zipfile.BadZipFile(f"bad CRC-32 for member {name}")
    else:
        raise InputError(f"{src}: member {name} is compressed with zip method "
                         f"{info.compress_type}; runlake reads stored, deflate and zstd "
                         "members")
    if len(data) > limit:
        raise InputError(f"{src}: member {name} inflates past the {limit:,}-byte limit "
                         "runlake reads from one .eval log")
    return data


def read_eval_log(src: Path, parse_constant: Callable[[str], Any] | None = None,
                  parse_float: Callable[[str], Any] | None = None) -> dict[str, Any]:
    """An Inspect `.eval` log (a zip archive) as the document its `.json` form holds.

    Layout, as Inspect writes it (inspect_ai/log/_recorders/eval.py): `header.json` (version,
    status, eval, plan, results, stats, error) once the eval finished, else
    `_journal/start.json` (version, eval, plan) of a log still running or cut short;
    `samples/<id>_epoch_<n>.json` one sample each (a name written twice: the last entry wins);
    `reductions.json`; `summaries.json` and `_journal/summaries/*.json` repeat the samples'
    scores and are not needed. Members are read into memory by name, never extracted: their
    names never become paths."""
    budget = EVAL_TOTAL_LIMIT

    def member_json(info: zipfile.ZipInfo) -> Any:
        nonlocal budget
        data = read_member(src, z, info, budget)
        budget -= len(data)
        try:
            return json.loads(data, parse_constant=parse_constant, parse_float=parse_float)
        except RecursionError:
            raise InputError(f"{src}: member {_member_name(info.filename)}: "
                             f"{TOO_DEEP}") from None
        except ValueError as e:
            raise InputError(f"{src}: member {_member_name(info.filename)} is not a JSON "
                             f"document ({e})") from None

    try:
        try:
            z = zipfile.ZipFile(src)
        except zipfile.BadZipFile:
            raise InputError(f"{src}: a damaged .eval log: its zip directory is missing or cut "
                             "short (a partly written or partly copied file?)") from None
        with z:
            infos = z.infolist()
            if len(infos) > EVAL_MAX_MEMBERS:
                raise InputError(f"{src}: {len(infos):,} members, more than the "
                                 f"{EVAL_MAX_MEMBERS:,} runlake reads from one .eval log")
            members = {i.filename: i for i in infos}  # a name written again: the last wins
            head_info = members.get("header.json") or members.get("_journal/start.json")
            if head_info is None:
                shown = ", ".join(_member_name(n) for n in list(members)[:3]) or "none"
                raise InputError(f"{src}: a zip archive but not an Inspect .eval log: no "
                                 f"header.json or _journal/start.json member (members: "
                                 f"{shown})")
            head = member_json(head_info)
            if not isinstance(head, dict) or not isinstance(head.get("eval"), dict):
                raise InputError(f"{src}: member {_member_name(head_info.filename)} is not an "
                                 "Inspect log header (an object with `eval`)")
            doc: dict[str, Any] = dict(head)
            doc.setdefault("status", "started")  # the journal's start: the eval never finished
            samples = []
            for name, info in members.items():
                if _EVAL_SAMPLE.fullmatch(name):
                    sample = member_json(info)
                    if not isinstance(sample, dict):
                        raise InputError(f"{src}: member {_member_name(name)} is not an "
                                         "Inspect sample (a JSON object)")
                    samples.append(sample)
            if "reductions.json" in members:
                doc["reductions"] = member_json(members["reductions.json"])
    except InputError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error, OSError,
            NotImplementedError, RuntimeError, ValueError) as e:
        raise InputError(f"{src}: a damaged .eval log (zip archive): {str(e)[:160]}") from None
    except Exception as e:  # zstandard.ZstdError: corrupt compressed data
        if type(e).__module__.startswith("zstandard") or type(e).__name__ == "ZstdError":
            raise InputError(f"{src}: a damaged .eval log (zip archive): a member's zstd data "
                             f"is corrupt ({str(e)[:120]})") from None
        raise
    # Inspect's order: by epoch, then id (numbers zero-filled).
    samples.sort(key=lambda s: (s.get("epoch") if isinstance(s.get("epoch"), int) else 0,
                                s["id"] if isinstance(s.get("id"), str)
                                else str(s.get("id")).zfill(20)))
    doc["samples"] = samples
    return doc
