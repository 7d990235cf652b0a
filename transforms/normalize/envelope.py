"""A response line's envelope fields, as the response reader takes them: identity strings,
timestamps, and the outcome (status, score, the grader's reason), each checked for its type;
what is wrong is added to the caller's list `bad` (the detail of envelope_malformed)."""

from datetime import UTC, datetime
from typing import Any

from transforms.normalize.transcript import DEEP
from transforms.read import jsontext
from transforms.read.dates import in_utc
from transforms.read.readers import describe

OUTCOME_STATUSES = frozenset({"passed", "failed", "error", "skipped"})


def first_str(obj: dict[str, Any], keys: tuple[str, ...], bad: list[str]) -> str | None:
    """The first of `keys` holding a non-empty string (or an integer, as text); a value of
    another type is named in `bad`."""
    for k in keys:
        v = obj.get(k)
        if v is None:
            continue
        if type(v) is str:
            if v:
                return v
            continue
        if isinstance(v, int) and not isinstance(v, bool):
            return str(v)
        bad.append(f"{k} is {describe(v)}, not a string")
    return None


def timestamp(obj: dict[str, Any], key: str, bad: list[str]) -> datetime | None:
    """An RFC 3339 time field in UTC (one without an offset read as UTC, and said so)."""
    v = obj.get(key)
    if v is None:
        return None
    if not isinstance(v, str):
        bad.append(f"{key} is {describe(v)}, not an RFC 3339 string")
        return None
    try:
        ts = datetime.fromisoformat(v)
    except ValueError:
        bad.append(f"{key} {v[:40]!r} is not an RFC 3339 timestamp")
        return None
    naive = ts.tzinfo is None
    utc = in_utc(ts.replace(tzinfo=UTC) if naive else ts, f"{key} {v[:40]!r}", bad)
    if utc is not None and naive:
        bad.append(f"{key} {v[:40]!r} has no UTC offset; read as UTC")
    return utc


PASSED_WORDS = {"true": True, "false": False, "yes": True, "no": False, "pass": True,
                "fail": False, "passed": True, "failed": False, "1": True, "0": False}
"""Text that unambiguously spells an outcome, as some harnesses write `passed` (any case)."""


def passed_status(value: Any, key: str, bad: list[str]) -> str | None:
    """The status a `passed` field gives: JSON true or false; also, with a finding in `bad`,
    the numbers 1 and 0 and the words of PASSED_WORDS; anything else gives no status (the run
    is ungraded) and a finding naming the value. Never dropped silently."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "passed" if value else "failed"
    word: bool | None = None
    if isinstance(value, int) and value in (0, 1):
        word = bool(value)
    elif isinstance(value, str):
        word = PASSED_WORDS.get(value.strip().lower())
    shown = (repr(value[:40]) if isinstance(value, str)
             else str(value)[:40] if isinstance(value, int | float) else describe(value))
    if word is None:
        bad.append(f"{key} {shown} is not a boolean; the run is ungraded")
        return None
    bad.append(f"{key} {shown} is not a boolean; read as {str(word).lower()}")
    return "passed" if word else "failed"


def json_field(value: Any, what: str, bad: list[str]) -> str:
    """A field kept as canonical JSON text; one nested too deep is flagged in `bad`."""
    out, too_deep = jsontext.text(value, sort=True)
    if too_deep:
        bad.append(f"{what} is nested more than {jsontext.MAX_DEPTH} levels deep ({DEEP})")
    return out


def outcome(env: dict[str, Any], bad: list[str]
             ) -> tuple[str | None, float | None, bool | None, str | None, str | None]:
    status = score = judge_skipped = error = explanation = None
    out = env.get("outcome")
    if isinstance(out, dict):
        st = out.get("status")
        if isinstance(st, str) and st in OUTCOME_STATUSES:
            status = st
        elif st is not None:
            bad.append(f"outcome.status {str(st)[:40]!r} is not one of "
                       "passed, failed, error, skipped")
        if status is None:
            status = passed_status(out.get("passed"), "outcome.passed", bad)
        sc = out.get("score")
        if isinstance(sc, int | float) and not isinstance(sc, bool) and 0 <= sc <= 1:
            score = float(sc)
        elif sc is not None:
            bad.append(f"outcome.score {str(sc)[:40]} is not a number in 0..1")
        js = out.get("judge_skipped")
        if isinstance(js, bool):
            judge_skipped = js
        elif js is not None:
            bad.append(f"outcome.judge_skipped is {describe(js)}, not a boolean")
        err = out.get("error")
        if isinstance(err, str):
            error = err
        elif err is not None:
            error = json_field(err, "outcome.error", bad)
        # The grader's reason, as free text like error: a structured one is kept as JSON.
        why = out.get("explanation")
        if why is None:
            why = out.get("reason")
        if isinstance(why, str):
            explanation = why
        elif why is not None:
            explanation = json_field(why, "outcome.explanation", bad)
    elif out is not None:
        bad.append(f"outcome is {describe(out)}, not an object")
    if status is None:
        status = passed_status(env.get("passed"), "passed", bad)
    return status, score, judge_skipped, error, explanation
