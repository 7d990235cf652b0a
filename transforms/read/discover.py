"""Finding input files: the files under the paths given (local folders walked, bucket
prefixes listed), each with its kind, and the paths passed over with the reason."""

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

from transforms.errors import InputError
from transforms.read import remote
from transforms.read.readers import (
    InputFile,
    Skipped,
    compression_of,
    kind_of,
    source_name,
)
from transforms.read.streams import NOT_REGULAR


def discover(paths: list[Path], kind: str | None = None,
             skipped: Skipped | None = None) -> list[InputFile]:
    """Input files under `paths` (files or folders), sorted, each with its kind or None.

    A folder walk follows links to folders (each real folder once, so a link loop ends) and
    passes over hidden entries, files that do not look like data, and folders that are no
    input: a Delta table or a runlake home (named in `skipped`). What cannot be read as
    a file is never opened and is added to `skipped` with the reason: a folder that cannot be
    listed, a dangling link, a link loop, and anything that is not a regular file (a FIFO, a
    socket, a device), also when it is named as a path."""
    def skip(path: Path, reason: str) -> None:
        if skipped is not None:
            skipped.append((str(path), reason))

    found: dict[Path, InputFile] = {}
    for p in paths:
        if remote.is_s3(p):
            _discover_remote(remote.S3Path(p), kind, found)
            continue
        if not p.exists():
            raise InputError(f"{p}: no such file or folder")
        if p.is_dir():
            reason = not_input(p)
            if reason is not None:
                skip(p, reason)
                continue
            for f, st in _walk(p, skip):
                k = kind or kind_of(f)
                if k is None and not _looks_like_data(f):
                    continue
                found[f.resolve()] = InputFile(f, source_name(f), k, compression_of(f),
                                               st.st_size)
            continue
        st = p.stat()
        if not stat.S_ISREG(st.st_mode):
            skip(p, NOT_REGULAR)
            continue
        found[p.resolve()] = InputFile(p, source_name(p), kind or kind_of(p), compression_of(p),
                                       st.st_size)
    return sorted(found.values(), key=lambda x: x.source_file)


def _discover_remote(root: "remote.S3Path", kind: str | None,
                     found: dict[Path, InputFile]) -> None:
    """The files under a bucket's prefix (or the one file it names), as a folder walk. An
    S3Path stands in for a Path: a pure path, whose names read as a local file's."""
    p = cast(Path, root)
    if remote.is_dir(root):
        for s3f, detail in remote.walk(root):
            f = cast(Path, s3f)
            k = kind or kind_of(f)
            if k is None and not _looks_like_data(f):
                continue
            found[f] = InputFile(f, source_name(f), k, compression_of(f), int(detail["size"]),
                                 remote.mtime_ns(detail))
        return
    try:
        detail = remote.info(root)
    except FileNotFoundError:
        raise InputError(f"{root.url}: no such file or prefix") from None
    found[p] = InputFile(p, source_name(p), kind or kind_of(p), compression_of(p),
                         int(detail["size"]), remote.mtime_ns(detail))




def _walk(root: Path, skip: Callable[[Path, str], None]
          ) -> Iterator[tuple[Path, os.stat_result]]:
    """The regular files under `root` (hidden entries left out) with their stat, following
    links to folders. Each real folder is walked once, by its own path when it lies under
    `root` (links are followed after the folders themselves), so a file keeps the date and
    kind folders it is stored under."""
    walked = {os.path.realpath(root)}
    folders: list[tuple[Path, frozenset[str]]] = [(root, frozenset(walked))]
    links: list[tuple[Path, frozenset[str], str]] = []
    while folders or links:
        if folders:
            folder, above = folders.pop()
        else:
            folder, above, real = links.pop(0)
            if real in walked:
                continue  # read already, by its own path or through another link
            walked.add(real)
        try:
            with os.scandir(folder) as it:
                names = sorted(e.name for e in it)
        except OSError as e:
            skip(folder, f"cannot read the folder: {e.strerror or e}")
            continue
        for name in names:
            if name.startswith("."):
                continue
            path = folder / name
            try:
                st = path.stat()  # through links
            except FileNotFoundError:
                skip(path, "a link to nothing (dangling link)" if path.is_symlink()
                     else "removed while the folder was read")
                continue
            except OSError as e:
                skip(path, f"cannot read: {e.strerror or e}")
                continue
            if stat.S_ISDIR(st.st_mode):
                real = os.path.realpath(path)
                reason = not_input(path)
                if reason is not None:
                    skip(path, reason)
                elif real in above:
                    skip(path, "a link to a folder above it (a loop)")
                elif path.is_symlink():
                    links.append((path, above | {real}, real))
                elif real not in walked:
                    walked.add(real)
                    folders.append((path, above | {real}))
            elif stat.S_ISREG(st.st_mode):
                yield path, st
            else:
                skip(path, NOT_REGULAR)


DELTA_TABLE = "a Delta table (its log and data files are not input)"
HOME = "a runlake home (its lake and warehouse are not input)"


def not_input(folder: Path) -> str | None:
    """Why a folder met in a walk is no input (None when it may be): a Delta table (it holds
    `_delta_log/`), or a runlake home (its `lake/` holds a Delta table, or it holds
    `warehouse.duckdb`), such as the default ./warehouse home inside the landing folder."""
    if (folder / "_delta_log").is_dir():
        return DELTA_TABLE
    if (folder / "warehouse.duckdb").is_file() and (folder / "lake").is_dir():
        return HOME
    try:
        with os.scandir(folder / "lake") as it:
            if any(e.is_dir() and (Path(e.path) / "_delta_log").is_dir() for e in it):
                return HOME
    except OSError:
        pass
    return None


def _looks_like_data(path: Path) -> bool:
    """Worth listing from a folder walk even when its kind is unknown: JSON(L) data, also
    under a compression runlake does not read (listed, with the reason)."""
    name = path.name.lower()
    for ext in (".gz", ".zst", ".bz2", ".xz", ".zip", ".lz4"):
        name = name.removesuffix(ext)
    return name.endswith((".jsonl", ".json", ".ndjson"))
