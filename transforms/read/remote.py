"""Landing files on object storage: `runlake ingest s3://bucket/landing/` and
RUNLAKE_LANDING=s3://... read files from a bucket as they read local ones.

A file in a bucket is an `S3Path` (its bucket and key as a pure path: its name, suffixes and
date folders read as a local file's do); the lake names it by its s3:// URL. It is read as a
stream of range requests through s3fs (a read-ahead buffer of READ_AHEAD bytes), never
downloaded whole, and cut into blocks, hashed and decompressed exactly as a local file.
"""

from datetime import datetime
from pathlib import PurePosixPath
from typing import IO, Any

from transforms.settings import S3

READ_AHEAD = 8 * 1024 * 1024
"""Bytes fetched by one range request when a bucket's file is read."""


class S3Path(PurePosixPath):
    """A file or prefix in a bucket: `bucket/key/...`, read as s3://bucket/key/..."""

    @property
    def url(self) -> str:
        return S3 + self.as_posix()


def is_s3(path: object) -> bool:
    return isinstance(path, S3Path)


def s3_path(url: str) -> S3Path:
    """The S3Path of an s3:// URL (transforms.settings.location checks its names)."""
    from transforms.settings import location

    checked = location(url)
    assert isinstance(checked, str)
    return S3Path(checked[len(S3):])


def _fs() -> Any:
    from transforms.objectstore import filesystem

    return filesystem()


def info(path: S3Path) -> dict[str, Any]:
    """The object's size and when it was last modified (FileNotFoundError when gone)."""
    return dict(_fs().info(path.as_posix()))


def mtime_ns(found: dict[str, Any]) -> int:
    when = found.get("LastModified")
    return int(when.timestamp() * 1_000_000_000) if isinstance(when, datetime) else 0


def is_dir(path: S3Path) -> bool:
    try:
        return bool(_fs().isdir(path.as_posix()))
    except FileNotFoundError:
        return False


def exists(path: S3Path) -> bool:
    return bool(_fs().exists(path.as_posix()))


def walk(root: S3Path) -> list[tuple[S3Path, dict[str, Any]]]:
    """The objects under a prefix (one paged listing), sorted, hidden names (a part starting
    with a dot) left out, with their size and modification time."""
    found = _fs().find(root.as_posix(), detail=True)
    out = []
    for name, detail in sorted(found.items()):
        if detail.get("type") != "file":
            continue
        path = S3Path(name)
        rel = path.relative_to(root) if path != root else PurePosixPath(path.name)
        if any(part.startswith(".") for part in rel.parts):
            continue
        out.append((path, dict(detail)))
    return out


def open_remote(path: S3Path) -> IO[bytes]:
    """The object opened as a stream of range requests."""
    return _fs().open(path.as_posix(), "rb", block_size=READ_AHEAD,  # type: ignore[no-any-return]
                      cache_type="readahead")
