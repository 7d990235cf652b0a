"""Where a home keeps what: the lake on a local folder or an S3-compatible object store, and
the warehouse file, its lock, the reports and the scratch folder of an ingest's staged parts
always on a local folder.

A home is a local folder (a Path) or an s3://bucket/prefix URL (a str: transforms.settings
checks it). `locate(home)` says where each part lives; `Store` reads and writes the lake's
own small files (the manifest marker, the tool registry, the model tables) and moves staged
data files into place the same way on both, so the code above it does not branch on where the
lake is.

On object storage nothing is renamed: a file is written whole by one PUT. Delta tables are
committed by delta-rs with the store's conditional put.
"""

import contextlib
import os
import shutil
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from transforms import settings as settings_
from transforms.objectstore import cache_folder, filesystem, storage_options
from transforms.settings import S3, is_remote

FILE_NAME = "warehouse.duckdb"


COMMIT_LOCK = ".commit.lock"
"""lake/.commit.lock on a local folder: the file the writer committing now locks."""
WRITER_LOCK = "_writer.lock"
"""lake/_writer.lock on object storage: the writer committing now (Store.writer_lock)."""


def remote_stamp(info: dict[str, Any]) -> tuple[Any, ...]:
    """An object's ETag and size, as a listing and a HEAD both give them (not its date: a
    listing gives milliseconds, a HEAD whole seconds)."""
    return (str(info.get("ETag") or info.get("etag") or "").strip('"'), info.get("size"))


class Store:
    """A folder of the lake, local or on object storage, addressed by relative names."""

    def __init__(self, base: Path | str, scratch: Path) -> None:
        self.remote = is_remote(base)
        self.base = base
        self.scratch = scratch
        """A local folder for files made before they go to an object store."""
        self.fs: Any = filesystem() if self.remote else None
        self.options: dict[str, str] = storage_options() if self.remote else {}

    def url(self, *parts: str) -> str:
        """The name DuckDB and delta-rs read it by (an absolute path, or an s3:// URL)."""
        if self.remote:
            return "/".join([str(self.base), *parts])
        return str(Path(self.base, *parts))

    def delta_url(self, *parts: str) -> str:
        """The name delta-rs opens it by: a file:// URL of a local path (delta-rs takes a
        plain path as a URL: a space or # in it would not name the file), the s3:// URL."""
        if self.remote:
            return self.url(*parts)
        return Path(self.base, *parts).as_uri()

    def path(self, *parts: str) -> Path:
        """The local path of a file of a local store (never of a remote one)."""
        if self.remote:
            raise AssertionError(f"{self.url(*parts)} is not a local file")
        return Path(self.base, *parts)

    def _key(self, *parts: str) -> str:
        return self.url(*parts)[len(S3):]

    def exists(self, *parts: str) -> bool:
        return bool(self.fs.exists(self._key(*parts))) if self.remote \
            else self.path(*parts).exists()

    def is_dir(self, *parts: str) -> bool:
        """A local folder; on an object store, a prefix that holds some object."""
        if not self.remote:
            return self.path(*parts).is_dir()
        try:
            return bool(self.fs.ls(self._key(*parts), detail=False))
        except FileNotFoundError:
            return False

    def read_bytes(self, *parts: str) -> bytes:
        """The file's bytes (FileNotFoundError when it is not there)."""
        if self.remote:
            return bytes(self.fs.cat_file(self._key(*parts)))
        return self.path(*parts).read_bytes()

    def read_text(self, *parts: str) -> str:
        return self.read_bytes(*parts).decode()

    def write_bytes(self, data: bytes, *parts: str) -> None:
        """Replace the file whole (readers see the old or the new, never a part)."""
        if self.remote:
            self.fs.pipe_file(self._key(*parts), data)
            return
        path = self.path(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
        tmp.write_bytes(data)
        os.replace(tmp, path)

    def touch(self, *parts: str) -> None:
        if self.remote:
            if not self.fs.exists(self._key(*parts)):
                self.fs.pipe_file(self._key(*parts), b"")
            return
        self.path(*parts).touch()

    def size(self, *parts: str) -> int | None:
        """The file's size (None when it is not there)."""
        try:
            if self.remote:
                return int(self.fs.info(self._key(*parts))["size"])
            return self.path(*parts).stat().st_size
        except (FileNotFoundError, OSError):
            return None

    def sizes(self, *parts: str) -> dict[str, int]:
        """Name -> size of the files in a folder (one listing on an object store)."""
        if self.remote:
            try:
                return {e["name"].rsplit("/", 1)[-1]: int(e["size"])
                        for e in self.fs.ls(self._key(*parts), detail=True)
                        if e.get("type") == "file"}
            except FileNotFoundError:
                return {}
        try:
            return {f.name: f.stat().st_size for f in self.path(*parts).iterdir()
                    if f.is_file()}
        except OSError:
            return {}

    def tree_sizes(self) -> Mapping[str, int]:
        """Name (relative to the store, parts joined by /) -> size of every file under the
        store: from one paged listing on an object store; on a local folder, each file's size
        is read when it is asked for (a walk would read the files no one asks about)."""
        if not self.remote:
            return _LocalSizes(self.path())
        prefix = self._key().rstrip("/") + "/"
        try:
            found = self.fs.find(prefix, detail=True)
        except FileNotFoundError:
            return {}
        return {name[len(prefix):]: int(info["size"]) for name, info in found.items()}

    @property
    def renames(self) -> bool:
        """A folder is renamed in one step (a local folder); on an object store a move copies
        every object."""
        return not self.remote

    def move(self, source: tuple[str, ...], target: tuple[str, ...]) -> None:
        """Move a folder (or file) to another name of the store: a rename on a local folder,
        on an object store a copy of every object and then their removal."""
        if self.remote:
            self.fs.copy(self._key(*source), self._key(*target), recursive=True)
            self.fs.rm(self._key(*source), recursive=True)
            return
        to = self.path(*target)
        to.parent.mkdir(parents=True, exist_ok=True)
        os.replace(self.path(*source), to)

    def put(self, local: Path, *parts: str) -> None:
        """Move a local file into the store (the local file is gone after)."""
        if self.remote:
            self.fs.put_file(str(local), self._key(*parts))
            local.unlink()
            return
        target = self.path(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(local, target)

    def link(self, source: str, *parts: str) -> None:
        """Make the file `source` (a name `url` gave) also the file `parts`, without writing
        its bytes again: a hard link on a local folder (a copy where the file system has
        none), a copy made by the object store itself on object storage."""
        if self.remote:
            self.fs.copy(source[len(S3):], self._key(*parts))
            return
        target = self.path(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source, target)
        except FileExistsError:
            if not os.path.samefile(source, target):
                os.replace(self._copy_beside(source, target), target)
        except OSError:  # no hard links here (another device, a file system without them)
            os.replace(self._copy_beside(source, target), target)

    @staticmethod
    def _copy_beside(source: str, target: Path) -> Path:
        tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex}")
        shutil.copyfile(source, tmp)
        return tmp

    def open_url(self, url: str) -> Any:
        """A file of the store, by the name `url` gave it, open to read (binary)."""
        if self.remote:
            return self.fs.open(url[len(S3):], "rb")
        return open(url, "rb")

    def stamp(self, *parts: str) -> tuple[Any, ...] | None:
        """What tells this file from another of the same name (None when it is not there):
        its ETag and size on an object store, its inode, size and modification time on a
        local folder."""
        try:
            if self.remote:
                return remote_stamp(self.fs.info(self._key(*parts)))
            st = os.stat(self.path(*parts))
        except (FileNotFoundError, NotADirectoryError):
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def listing(self, *parts: str) -> dict[str, tuple[Any, ...] | None]:
        """Name -> stamp of what a folder holds, from one listing (a local folder's stamps
        are not read: None); FileNotFoundError when there is no such folder."""
        if self.remote:
            return {str(f["name"]).rsplit("/", 1)[-1]: remote_stamp(f)
                    for f in self.fs.ls(self._key(*parts), detail=True)}
        try:
            return dict.fromkeys(os.listdir(self.path(*parts)))
        except NotADirectoryError:
            raise FileNotFoundError(self.url(*parts)) from None

    def folders(self, *parts: str) -> list[str]:
        """The names of the folders in a folder (on an object store, every name under the
        prefix); none when it is not there."""
        if self.remote:
            try:
                found = self.fs.ls(self._key(*parts), detail=False)
            except FileNotFoundError:
                return []
            return [str(f).rstrip("/").rsplit("/", 1)[-1] for f in found]
        try:
            return [p.name for p in self.path(*parts).iterdir() if p.is_dir()]
        except OSError:
            return []

    @contextlib.contextmanager
    def writer_lock(self) -> Iterator[None]:
        """Hold the store's writer lock while the block runs, waiting for any other holder: a
        file lock (.commit.lock) on a local folder, on an object store an object
        (_writer.lock) created only if it is not there (transforms.lake.locks)."""
        from transforms.lake import locks

        if self.remote:
            with locks.bucket_lock(self.fs, self._key(WRITER_LOCK)):
                yield
            return
        with locks.file_lock(self.path(COMMIT_LOCK)):
            yield

    def delete(self, *parts: str) -> None:
        """Delete one file (nothing when it is not there)."""
        if self.remote:
            with contextlib.suppress(FileNotFoundError):
                self.fs.rm(self._key(*parts))
            return
        self.path(*parts).unlink(missing_ok=True)

    def rmtree(self, *parts: str) -> None:
        if self.remote:
            with contextlib.suppress(FileNotFoundError):
                self.fs.rm(self._key(*parts), recursive=True)
            return
        shutil.rmtree(self.path(*parts), ignore_errors=True)


class _LocalSizes(Mapping[str, int]):
    """The sizes of the files under a local folder, each read when asked for."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __getitem__(self, name: str) -> int:
        try:
            return os.stat(self.root / name).st_size
        except OSError:
            raise KeyError(name) from None

    def __iter__(self) -> Iterator[str]:
        for folder, _, files in os.walk(self.root):
            rel = Path(folder).relative_to(self.root).as_posix()
            yield from (f if rel == "." else f"{rel}/{f}" for f in files)

    def __len__(self) -> int:
        return sum(1 for _ in self)


@dataclass(frozen=True)
class Where:
    """Where the parts of one home live."""

    home: Path | str
    """The home as given (a resolved Path, or the s3:// URL)."""
    name: str
    """The home as the warehouse stamp and messages name it."""
    folder: Path
    """The local folder of the warehouse file, its lock, and the scratch folder (.scratch/)."""
    warehouse: Path
    reports: Path

    @property
    def remote(self) -> bool:
        return is_remote(self.home)

    @property
    def scratch(self) -> Path:
        return self.folder / ".scratch"

    def lake(self) -> Store:
        base: Path | str = f"{self.home}/lake" if self.remote else Path(self.home) / "lake"
        return Store(base, self.scratch)


def locate(home: Path | str) -> Where:
    """Where the parts of `home` live (RUNLAKE_WAREHOUSE moves the warehouse file)."""
    s = settings_.load()
    if is_remote(home):
        url = str(home)
        warehouse = (s.warehouse.resolve() if s.warehouse is not None
                     else cache_folder(url, s.xdg_cache_home) / FILE_NAME)
        return Where(url, url, warehouse.parent, warehouse, warehouse.parent / "reports")
    folder = Path(home).resolve()
    warehouse = s.warehouse.resolve() if s.warehouse is not None else folder / FILE_NAME
    return Where(folder, str(folder), folder, warehouse, folder / "reports")
