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
    (or under XDG_CACHE_HOME); the name holds plain characters only, whatever the URL."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "-", url[len(S3):]).strip("-.")[:80]
    digest = hashlib.sha256(url.encode()).hexdigest()[:10]
    return cache_home(xdg) / f"{readable}-{digest}"
