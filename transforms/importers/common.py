"""What every importer shares: the `Importer` interface, the result of one import, and the
helpers the formats convert with (transcripts, times, durations, names)."""

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from transforms.errors import InputError
from transforms.normalize.columns import INT64_MAX

Lines = list[dict[str, Any]]
Convert = Callable[[Path, Any, str | None, str | None], tuple[Lines, list[str]]]
"""(source path, parsed document, --agent, --model) -> (landing lines, notes): the notes say
what the source lacks or how it was read, one sentence each."""


@dataclass(frozen=True)
class Importer:
    """One source format `runlake import` reads."""

    name: str
    """The FORMAT argument of `runlake import`."""
    describe: str
    """What the source looks like, in one line (for --help)."""
    matches: Callable[[Any], bool]
    """Whether a parsed document has this format's outline."""
    convert: Convert
    """The landing lines of a document that matches; called only for one that does."""
    kind: str = "responses"
    """The landing kind written: `<name>.<kind>.jsonl` (responses, spans or otlp)."""
    count: Callable[[Lines], int] = len
    """How many runs (or, for span kinds, spans) the written lines hold."""
    files_in: Callable[[Path], list[Path]] | None = None
    """For a format that imports folders: the sources a folder holds (an InputError when it
    holds none)."""


@dataclass(frozen=True)
class Recognized:
    """A document runlake knows but does not import, and what to do with it instead."""

    name: str
    matches: Callable[[Any], bool]
    hint: str


@dataclass
class ImportResult:
    source: Path
    output: Path
    runs: int
    passed: int
    graded: int = 0
    notes: list[str] = field(default_factory=list)
    """What the source lacks or how it was read, one sentence each."""


TOO_DEEP = "JSON nested too deeply to import (Python's JSON reader stops near 1,000 levels)"

KEEP = ("role", "content", "tool_calls", "tool_call_id", "name")
"""The fields of an OpenAI-style message a transcript keeps."""


def a_or_an(word: str) -> str:
    return "an" if word[:1] in ("a", "e", "i", "o", "u") else "a"


def safe_name(src: Path) -> str:
    """The source's name as a file name and id: letters, digits, `.`, `_` and `-` only."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", src.stem).strip("._") or "import"
    return stem[:120]


def final(messages: list[Any]) -> str:
    """The last non-empty text an assistant message holds: the run's final response."""
    for m in reversed(messages):
        if isinstance(m, dict) and m.get("role") == "assistant" and \
                isinstance(m.get("content"), str) and m["content"]:
            return str(m["content"])
    return ""


def json_object(v: Any) -> dict[str, Any]:
    """A JSON object, or a string holding one (SWE-agent's config, Langfuse's metadata);
    anything else is an empty object."""
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except ValueError:
            return {}
    return v if isinstance(v, dict) else {}


def explained(why: str | None) -> dict[str, str]:
    """An outcome's `explanation`, when there is one."""
    return {"explanation": why} if why else {}


def num(v: Any) -> str:
    """A number as a reward line shows it (`1`, `0.5`); anything else as its text."""
    return f"{v:g}" if isinstance(v, int | float) and not isinstance(v, bool) else str(v)


def ms(src: Path, seconds: float, what: str) -> int:
    """Seconds as whole milliseconds; a duration no count can hold (1e308 s) is refused."""
    value = seconds * 1000
    if not math.isfinite(value) or abs(value) > INT64_MAX:
        raise InputError(f"{src}: {what} {seconds:g} s is out of range for a duration")
    return round(value)


def utc(ts: Any) -> str | None:
    """An ISO time as given, read as UTC when it names no zone (`Z` added)."""
    if not isinstance(ts, str) or not ts:
        return None
    return ts if re.search(r"(Z|[+-]\d\d:?\d\d)$", ts) else ts + "Z"


def parse_time(ts: Any) -> datetime | None:
    """An ISO time in the zone it names (one without a zone read as UTC); None when it is
    not one."""
    if not isinstance(ts, str) or not ts:
        return None
    try:
        t = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def rfc3339(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def unix_ns(ts: Any) -> int | None:
    """An ISO time as Unix nanoseconds, exact to the microsecond (no float rounding)."""
    t = parse_time(ts)
    if t is None:
        return None
    return int(t.replace(microsecond=0).timestamp()) * 1_000_000_000 + t.microsecond * 1000
