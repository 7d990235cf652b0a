"""runlake's settings: one pydantic-settings object; nothing else reads the environment."""

import os
import re
import urllib.parse
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from transforms.errors import InputError

MAX_RETENTION_HOURS = 876_000
"""The longest retention (100 years): vacuum takes whole hours, and a longer
one (or an infinite one) is no retention delta-rs can count."""


class Settings(BaseSettings):
    """Where the warehouse lives, where new trace files land, and the limits the pipeline's
    checks hold the data to (`RUNLAKE_` variables)."""

    model_config = SettingsConfigDict(env_prefix="RUNLAKE_", extra="ignore")

    home: Path | str = Field(Path("warehouse"), description="Warehouse folder: lake/, "
                             "warehouse.duckdb, reports/; or an s3://bucket/prefix URL that holds "
                             "the lake (docs/object-storage.md).")
    warehouse: Path | None = Field(None, description="The warehouse.duckdb file (default: in "
                                   "the home folder; for an s3:// home, under the user's cache "
                                   "folder). Reports are written beside it for an s3:// home.")
    landing: Path | str = Field(Path("data_samples"), description="Folder the pipeline "
                                "ingests: YYYY-MM-DD/ folders and loose files; or an "
                                "s3://bucket/prefix URL.")
    workers: int | None = Field(None, ge=1, le=64, description="Parallel parser processes "
                                "(default: the machine's cores, at most 8, as many as the "
                                "memory holds).")
    memory_mb: float | None = Field(None, ge=400, le=16_777_216, allow_inf_nan=False,
                                    description="Memory an ingest may use, in MiB, its workers "
                                    "and DuckDB included (default: the machine's memory or its "
                                    "container's limit, whichever is smaller).")
    tools: Path | None = Field(None, description="Tool registry (tools.json or tools.yaml) "
                               "that every run's tool calls are checked against.")
    model_aliases: Path | None = Field(None, description="Model alias table (YAML) extending "
                                       "the shipped transforms/data/model_aliases.yaml: its "
                                       "aliases win, its patterns are tried first.")
    prices: Path | None = Field(None, description="Price table (YAML) extending the shipped "
                                "transforms/data/model_prices.yaml: its models replace those "
                                "of the same name.")
    deciding_evaluations: str = Field("", description="The evaluations (gen_ai.evaluation.name, "
                                      "comma-separated) whose verdicts decide the status of a "
                                      "run made from a trace; empty: every evaluation with a "
                                      "pass or fail label.")
    max_quarantine_share: float = Field(0.05, ge=0, le=1, description="Check: largest share of "
                                        "a day's lines that may be quarantined.")
    max_contract_violation_rate: float = Field(0.10, ge=0, le=1, description="Check: largest "
                                               "share of a day's runs with an error-severity "
                                               "contract finding.")
    max_truncation_rate: float = Field(0.10, ge=0, le=1, description="Check: largest share of "
                                       "a day's runs with a truncation finding.")
    retention_hours: float = Field(2.0, ge=0, le=MAX_RETENTION_HOURS, allow_inf_nan=False,
                                   description="How long files replaced in the lake stay on "
                                   "disk for queries that started before (vacuum); longer than "
                                   "your longest query. Vacuum counts whole hours, rounded up "
                                   "(0.5 keeps them 1 hour); at most 876000 (100 years).")
    webhook_url: str | None = Field(None, description="URL that receives a JSON summary (POST) "
                                    "when a nightly report finds a regression or missing test "
                                    "cases (`runlake report`, the nightly_report asset).")
    freshness_hours: float = Field(36.0, gt=0, description="Check: the newest day with runs "
                                   "must be at most this many hours old.")

    # `runlake serve`, the OTLP/HTTP receiver (docs/receiver.md).
    receiver_token: str | None = Field(None, repr=False, min_length=16, pattern=r"^[!-~]+$",
                                       description="Bearer token the receiver requires "
                                       "(`Authorization: Bearer …`); required to listen on an "
                                       "address other than the loopback. At least 16 printable "
                                       "ASCII characters, no spaces.")
    receiver_max_body_mb: float = Field(20.0, gt=0, le=1024, description="Largest request the "
                                        "receiver takes, in MiB, before and after gzip (413 "
                                        "above it).")
    receiver_queue_mb: float = Field(64.0, gt=0, le=4096, description="Received spans waiting "
                                     "to be written, in MiB, above which the receiver answers "
                                     "503 with Retry-After.")
    receiver_connections: int = Field(256, ge=1, le=4096, description="Connections the "
                                      "receiver keeps open at once. When all are taken, a new "
                                      "one takes the place of the oldest that is slow to send "
                                      "its request; when every one is being answered, it gets "
                                      "503 with Retry-After.")
    receiver_memory_mb: float = Field(192.0, ge=16, le=65536, description="Memory, in MiB, "
                                      "that requests may take at once: a quarter for bodies "
                                      "being read, the rest for decoding (8 times a body's "
                                      "gunzipped size); a request that finds its share taken "
                                      "waits up to 5 s, then gets 503 with Retry-After.")
    receiver_file_mb: float = Field(64.0, gt=0, le=65536, description="A landing file is "
                                    "closed (renamed to its final name) once it holds this many "
                                    "MiB.")
    receiver_file_seconds: float = Field(300.0, gt=0, le=86400, description="A landing file is "
                                         "closed this many seconds after it was opened (and at "
                                         "UTC midnight).")

    # The standard AWS variables (an s3:// home or landing; docs/object-storage.md).
    aws_endpoint_url: str | None = Field(None, validation_alias=AliasChoices(
        "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"))
    aws_access_key_id: str | None = Field(None, validation_alias="AWS_ACCESS_KEY_ID",
                                          repr=False)
    aws_secret_access_key: str | None = Field(None, validation_alias="AWS_SECRET_ACCESS_KEY",
                                              repr=False)
    aws_session_token: str | None = Field(None, validation_alias="AWS_SESSION_TOKEN",
                                          repr=False)
    aws_region: str | None = Field(None, validation_alias=AliasChoices(
        "AWS_REGION", "AWS_DEFAULT_REGION"))
    aws_allow_http: bool = Field(False, validation_alias="AWS_ALLOW_HTTP")
    xdg_cache_home: Path | None = Field(None, validation_alias="XDG_CACHE_HOME")

    @field_validator("home", "landing", mode="before")
    @classmethod
    def _location(cls, value: Any) -> Any:
        return location(value) if isinstance(value, str | Path) else value

    @field_validator("webhook_url")
    @classmethod
    def _webhook(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urllib.parse.urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError("not an http:// or https:// URL")
        return value

    def storage_options(self) -> dict[str, str]:
        """The object store options of an s3:// home (delta-rs names)."""
        out = {"AWS_ENDPOINT_URL": self.aws_endpoint_url, "AWS_REGION": self.aws_region,
               "AWS_ACCESS_KEY_ID": self.aws_access_key_id,
               "AWS_SECRET_ACCESS_KEY": self.aws_secret_access_key,
               "AWS_SESSION_TOKEN": self.aws_session_token,
               "AWS_ALLOW_HTTP": "true" if self.aws_allow_http else None}
        return {k: v for k, v in out.items() if v}


S3 = "s3://"
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_KEY_PART = re.compile(r"[A-Za-z0-9._=+@,-]+")


def location(value: str | Path) -> Path | str:
    """A local folder (a Path) or an s3://bucket/prefix URL (a str, kept as written but for a
    trailing slash: pathlib would collapse its `//`). An empty path, a URL of another scheme,
    or one whose bucket or prefix holds anything but plain name characters, is refused."""
    if isinstance(value, Path):
        return value
    if value == "":
        # Path("") is the current folder: an unset variable is not a choice of folder.
        raise ValueError("an empty path: name a folder (`.` for the current one)")
    if "://" not in value:
        return Path(value)
    if not value.startswith(S3):
        raise ValueError(f"{value.split('://')[0]}:// is not supported: a local folder or an "
                         "s3://bucket/prefix URL")
    bucket, _, prefix = value[len(S3):].rstrip("/").partition("/")
    parts = prefix.split("/") if prefix else []
    if not _BUCKET.fullmatch(bucket) or any(
            p in ("", ".", "..") or not _KEY_PART.fullmatch(p) for p in parts):
        raise ValueError("an s3:// URL needs a bucket name and a prefix of plain names "
                         "(letters, digits, . _ - = + @ ,) separated by single slashes")
    return S3 + "/".join([bucket, *parts])


def cache_home(xdg: Path | None) -> Path:
    """runlake's folder of local caches: runlake/ under XDG_CACHE_HOME when it is an absolute
    path, else ~/.cache/runlake (RuntimeError when there is no home folder)."""
    base = xdg if xdg is not None and xdg.is_absolute() else Path.home() / ".cache"
    return base / "runlake"


def is_remote(home: Path | str) -> bool:
    return isinstance(home, str) and home.startswith(S3)


_LOADED: dict[tuple[tuple[str, str], ...], Settings] = {}


def load() -> Settings:
    """The settings from the environment; a bad value raises an InputError naming each
    variable that holds one (`RUNLAKE_WORKERS='-x': Input should be a valid integer, ...`).
    Read once per state of the environment: an ingest asks many times, and each read
    validates every setting again."""
    key = tuple(sorted(os.environ.items()))
    found = _LOADED.get(key)
    if found is not None:
        return found.model_copy()
    problem: str | None = None
    try:
        settings = Settings()
    except ValidationError as e:
        problem = _told(e)
    if problem is not None:
        # Raised here, with no link to the ValidationError: its errors hold the validator's
        # exception and its traceback, and raised inside `except` that chain outlived the
        # command, keeping the frames of the command that asked (and the DuckDB objects they
        # hold) alive until the interpreter exits (nanobind then reports them as leaked).
        raise InputError(problem)
    _LOADED.clear()  # the environment changed: the previous state is not asked again
    _LOADED[key] = settings
    return settings.model_copy()


def _told(e: ValidationError) -> str:
    """A ValidationError of the settings as one line naming each variable."""
    said: dict[str, str] = {}
    for error in e.errors(include_context=False, include_url=False):
        field = str(error["loc"][0]) if error["loc"] else ""
        name = f"{Settings.model_config.get('env_prefix', '')}{field}".upper()
        msg = error["msg"].removeprefix("Value error, ")
        info = Settings.model_fields.get(field)
        shown = "(hidden)" if info is not None and info.repr is False else \
            repr(str(error.get("input"))[:60])
        said.setdefault(name, f"{name}={shown}: {msg}")
    return "; ".join(said.values())
