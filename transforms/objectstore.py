"""The connection to an S3-compatible object store: one s3fs filesystem per process and AWS_*
settings, the options delta-rs is given, and the local cache folder of an s3:// home. Both the
landing reader (transforms.read.remote) and the lake (transforms.lake.store) reach a bucket
through these."""

import hashlib
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from transforms import settings as settings_
from transforms.settings import S3, cache_home


@lru_cache(maxsize=8)
def _filesystem(options: tuple[tuple[str, str], ...]) -> Any:
    import s3fs

    o = dict(options)
    client: dict[str, Any] = {}
    if o.get("AWS_REGION"):
        client["region_name"] = o["AWS_REGION"]
    # No listing cache: other writers add and remove files all the time.
    return s3fs.S3FileSystem(key=o.get("AWS_ACCESS_KEY_ID"),
                             secret=o.get("AWS_SECRET_ACCESS_KEY"),
                             token=o.get("AWS_SESSION_TOKEN"),
                             endpoint_url=o.get("AWS_ENDPOINT_URL"), client_kwargs=client,
                             use_listings_cache=False, skip_instance_cache=True)


def storage_options() -> dict[str, str]:
    return settings_.load().storage_options()


def filesystem() -> Any:
    """The fsspec S3 filesystem (s3fs) of the AWS_* settings, one per process and options."""
    if _filesystem.cache_info().currsize and os.getpid() != _FS_PID[0]:
        _filesystem.cache_clear()  # a forked process: the parent's event loop is not its own
    _FS_PID[0] = os.getpid()
    return _filesystem(tuple(sorted(storage_options().items())))


_FS_PID = [os.getpid()]


def cache_folder(url: str, xdg: Path | None = None) -> Path:
    """The local folder of an s3:// home's warehouse: ~/.cache/runlake/<bucket-prefix>-<hash>
    (or under XDG_CACHE_HOME); a local home's path is named the same way (<path>-<hash>). The
    name holds plain characters only, whatever the URL or path."""
    name = url[len(S3):] if url.startswith(S3) else url
    readable = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:80]
    digest = hashlib.sha256(url.encode()).hexdigest()[:10]
    return cache_home(xdg) / f"{readable}-{digest}"


ROUTE_ENV = "RUNLAKE_S3_READER"
"""`httpfs`, `s3fs` or unset (httpfs when DuckDB can load it, else s3fs): how DuckDB reads the
s3:// files of a lake (`reach`)."""
SECRET = "runlake_s3"


def httpfs_binaries() -> list[str]:
    """The httpfs extension files this DuckDB may load by path: the one inside the PyPI
    package `duckdb-extension-httpfs` built for this DuckDB version (none for another)."""
    import duckdb

    try:
        import duckdb_extension_httpfs as pkg  # type: ignore[import-not-found]
    except ImportError:
        return []
    found = Path(pkg.__file__).parent / "extensions" / f"v{duckdb.__version__}" / \
        "httpfs.duckdb_extension"
    return [str(found)] if found.is_file() else []


_ROUTE: dict[int, str] = {}
"""The route that worked in this process (by pid): `LOAD <file>` or `LOAD httpfs`, or
`s3fs`; a route that failed once is not tried on every connection."""


def load_httpfs(con: Any) -> str | None:
    """Load httpfs on `con`: what worked (`httpfs` from DuckDB's own extension folder, as an
    online install puts it there, or the file of the PyPI package), or None."""
    import duckdb

    tried = _ROUTE.get(os.getpid())
    if tried == "s3fs":
        return None
    ways = [tried] if tried else ["httpfs", *(f"'{b}'" for b in httpfs_binaries())]
    for way in ways:
        try:
            con.execute(f"LOAD {way}")
        except duckdb.Error:
            continue
        _ROUTE[os.getpid()] = way
        return way
    return None


def secret_sql(options: dict[str, str]) -> str:
    """CREATE SECRET of the AWS_* settings for DuckDB's httpfs: an endpoint other than AWS is
    reached by path-style URLs, over http when its URL says so."""
    from urllib.parse import urlsplit

    def q(v: str) -> str:
        return "'" + v.replace("'", "''") + "'"

    parts = ["TYPE s3"]
    for setting, name in (("AWS_ACCESS_KEY_ID", "KEY_ID"), ("AWS_SECRET_ACCESS_KEY", "SECRET"),
                          ("AWS_SESSION_TOKEN", "SESSION_TOKEN"), ("AWS_REGION", "REGION")):
        if options.get(setting):
            parts.append(f"{name} {q(options[setting])}")
    endpoint = options.get("AWS_ENDPOINT_URL")
    if endpoint:
        url = urlsplit(endpoint)
        parts.append(f"ENDPOINT {q(url.netloc + url.path.rstrip('/'))}")
        parts.append(f"USE_SSL {'false' if url.scheme == 'http' else 'true'}")
        parts.append("URL_STYLE 'path'")
    return f"CREATE OR REPLACE TEMPORARY SECRET {SECRET} ({', '.join(parts)})"


def uses_s3fs(con: Any) -> bool:
    """s3fs is registered on the connection (`transforms.db.use_filesystem`: by its protocol
    name; DuckDB's own file systems are listed by class names such as S3FileSystem)."""
    return "s3" in con.list_filesystems()


def reach(con: Any) -> str:
    """Let a DuckDB connection read s3:// URLs with the AWS_* settings: through DuckDB's own
    httpfs when it loads and the settings name the keys (RUNLAKE_S3_READER=httpfs insists on
    it), else through Python's s3fs registered on the connection (RUNLAKE_S3_READER=s3fs
    chooses it). Returns the route taken;
    raises RunlakeError with one line when neither works. Only for URLs of files that are
    never rewritten under the same name while the connection is open: through httpfs the
    connection keeps each file's size for its life."""
    import duckdb

    from transforms import db
    from transforms.errors import RunlakeError

    want = os.environ.get(ROUTE_ENV, "").strip().lower()
    if want not in ("", "httpfs", "s3fs"):
        raise RunlakeError(f"{ROUTE_ENV}={want!r}: choose httpfs or s3fs (or leave it unset)")
    options = storage_options()
    # Without keys in the settings s3fs finds credentials as the AWS SDKs do (profiles,
    # instance roles); httpfs alone would not.
    keyed = bool(options.get("AWS_ACCESS_KEY_ID")) or want == "httpfs"
    if want != "s3fs" and keyed and not uses_s3fs(con):
        if load_httpfs(con) is not None:
            con.execute(secret_sql(options))
            # The size and date of each s3:// file once per connection, not once per query
            # of each view over it (a HEAD each): the lake's data files never change under
            # their names, and what is rewritten in place (the tool registry) is read whole
            # by Python instead (transforms.warehouse.staging.read_registry).
            con.execute("SET enable_http_metadata_cache = true")
            return "httpfs"
        if want == "httpfs":
            raise RunlakeError(
                f"{ROUTE_ENV}=httpfs but DuckDB {duckdb.__version__} cannot load its httpfs "
                "extension (install the duckdb-extension-httpfs package of the same version, "
                "or run `INSTALL httpfs` online)")
    try:
        db.use_filesystem(con, filesystem())
    except ImportError as e:
        raise RunlakeError("DuckDB cannot read s3:// here: its httpfs extension does not load "
                           f"and s3fs is not installed ({e})") from None
    if not want:
        _ROUTE.setdefault(os.getpid(), "s3fs")
    return "s3fs"
