"""DuckDB connections as runlake opens them: no progress bar on stdout, explicit settings."""

import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb


def connect(database: str = ":memory:", read_only: bool = False,
            **config: Any) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with runlake's defaults (quiet); `config` adds DuckDB settings."""
    con = duckdb.connect(database, read_only=read_only, config=config)
    con.execute("SET enable_progress_bar = false")
    return con


def scalar(con: duckdb.DuckDBPyConnection, sql: str, params: Any = None) -> Any:
    """The first column of the first row of a query (None when it returns no row)."""
    row = con.execute(sql, params).fetchone() if params is not None else \
        con.execute(sql).fetchone()
    return row[0] if row else None


def use_filesystem(con: duckdb.DuckDBPyConnection, fs: Any) -> None:
    """Let the connection read (and write) the URLs of an fsspec filesystem (s3fs: the
    s3:// files of a lake on object storage); once per connection."""
    if fs is None:
        return
    name = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    if name not in con.list_filesystems():
        con.register_filesystem(fs)


def sandbox(con: duckdb.DuckDBPyConnection, readable: Iterable[Path | str],
            temp: Path | str) -> None:
    """Confine a connection that runs other people's SQL with DuckDB's own sandbox: it opens
    no file outside the folders `readable` (reading or writing: no COPY TO elsewhere, no
    ATTACH, no read_csv('/etc/passwd')), installs and loads no extension, scans no Python
    variable, and its configuration is locked so that no query can undo any of this. The
    views keep reading the lake's files by path inside those folders. An s3:// URL among
    `readable` allows that prefix of the bucket (through a filesystem registered with
    `use_filesystem`; nothing local).

    DuckDB also lets a connection read its own database file and its temp folder, whatever
    the sandbox says, and a connection's default temp folder is shared (`.tmp` in the current
    folder for one in memory, `<file>.tmp` beside a database file): the connection must have
    been opened with `temp_directory=temp`, a private folder made for it (`private_temp`),
    which then holds nothing but what its own queries spill."""
    folders = sorted({(p if isinstance(p, str) and "://" in p else str(Path(p).resolve()))
                      .rstrip("/") + "/" for p in readable})
    spill = str(Path(temp).resolve())
    if con.execute("SELECT current_setting('temp_directory')").fetchall() != [(spill,)]:
        raise ValueError(f"the connection was not opened with its private temp folder {spill}")
    con.execute("SET allowed_directories = ?", [folders])
    for setting in ("enable_external_access", "autoinstall_known_extensions",
                    "autoload_known_extensions", "python_enable_replacements"):
        con.execute(f"SET {setting} = false")
    con.execute("SET lock_configuration = true")
    [(allowed,)] = con.execute("SELECT current_setting('allowed_directories')").fetchall()
    if sorted(allowed) != sorted({*folders, spill.rstrip("/") + "/"}):
        raise ValueError(f"the sandbox allows {allowed}, not only {folders} and {spill}")


@contextmanager
def private_temp() -> Iterator[Path]:
    """A new empty folder only this user can open, for one sandboxed connection to spill
    into (`sandbox`), removed afterwards with whatever it spilled."""
    with tempfile.TemporaryDirectory(prefix="runlake-query-") as folder:
        yield Path(folder).resolve()
