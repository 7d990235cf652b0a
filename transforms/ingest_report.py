"""What an ingest read: a report per file (its lines accepted, quarantined and blank) and the
report of the whole ingest that the CLI and Dagster print."""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from transforms.read.readers import READABLE_KINDS

Progress = Callable[[int], None]
"""Called with the number of input bytes just read."""


@dataclass
class FileReport:
    source_file: str
    kind: str | None
    bytes: int
    lines: int = 0
    accepted: int = 0
    quarantined: int = 0
    blank: int = 0
    skipped: bool = False
    error: str | None = None
    same_as: str | None = None
    """Skipped: the file holds the same bytes as this file, ingested and still there (a
    copy): its rows are in the lake once, under that name."""
    renamed_from: str | None = None
    """The file holds the same bytes as this ingested file, which is gone: the rows move to
    the new name in the same commit (a rename), never counted twice."""


@dataclass
class IngestReport:
    home: Path | str
    files: list[FileReport] = field(default_factory=list)
    days: list[date] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    flags_by_code: dict[str, int] = field(default_factory=dict)
    quarantine_by_code: dict[str, int] = field(default_factory=dict)
    maintenance: dict[str, int] = field(default_factory=dict)
    unpriced_models: dict[str, int] = field(default_factory=dict)
    """Canonical models of this ingest's runs (with token totals) and LLM calls (with tokens
    and no price of their own) that the price table does not list, each once, with how many
    runs and calls: their cost is unknown."""
    skipped_paths: list[tuple[str, str]] = field(default_factory=list)
    """Paths met under the inputs that are not read, with the reason: a folder that cannot be
    listed, a dangling link, a link loop, a FIFO or anything else that is not a regular file."""
    model_tables_changed: bool = False
    """The alias or price table differs from the one the lake was last ingested with: the
    views were computed again (no file is read again for it)."""

    @property
    def lines_read(self) -> int:
        return sum(f.lines for f in self.files)

    @property
    def unreadable(self) -> list[FileReport]:
        return [f for f in self.files if f.kind not in READABLE_KINDS]
