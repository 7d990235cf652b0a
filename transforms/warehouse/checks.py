"""The pipeline's data checks: each measures one day (or the whole lake) against a limit from
the settings and says what it measured. Dagster reports them as asset checks; they read a
`warehouse.live` connection (or `warehouse.staged`, the same lake version's warehouse file built
aside), so they judge the lake before the warehouse is published.

`CHECKS` is the one list of them: each check's name, the lake table it belongs to, whether it
blocks the warehouse, its description and its measure. The Dagster check specs are made from
it (pipelines/assets/lake.py); to add a check, write its measure and list it there."""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any, NamedTuple

import duckdb

from transforms import db
from transforms.settings import Settings


@dataclass
class CheckOutcome:
    name: str
    passed: bool
    blocking: bool
    summary: str
    metadata: dict[str, Any] = field(default_factory=dict)


class Measured(NamedTuple):
    passed: bool
    summary: str
    metadata: dict[str, Any]


def _rate(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def lines_accounted_for(con: duckdb.DuckDBPyConnection, day: date, s: Settings,
                        now: datetime, newest_landing_day: date | None) -> Measured:
    """Every file's lines are rows, quarantine or blank, and the lake holds them (whole lake)."""
    bad = con.execute("SELECT source_file, lines, lines_accounted, lines_quarantined, "
                      "quarantine_rows, lines_accepted, run_rows "
                      "FROM checks.lines_accounted_for ORDER BY 1 LIMIT 20").fetchall()
    n_files = db.scalar(con, "SELECT count(*) FROM staging.stg_ingest_files")
    meta: dict[str, Any] = {"files_checked": int(n_files), "files_failing": len(bad)}
    if bad:
        meta["failing_files"] = "\n".join(
            f"- {r[0]}: {r[1]} lines, {r[2]} accounted; {r[3]} quarantined vs {r[4]} rows; "
            f"{r[5]} accepted vs {r[6]} run rows" for r in bad)
    return Measured(not bad, f"{len(bad)} of {n_files} files break the line accounting", meta)


def quarantine_share(con: duckdb.DuckDBPyConnection, day: date, s: Settings,
                     now: datetime, newest_landing_day: date | None) -> Measured:
    """Share of the day's input lines that were quarantined."""
    lines, quarantined = con.execute(
        "SELECT coalesce(sum(lines), 0), coalesce(sum(lines_quarantined), 0) "
        "FROM staging.stg_ingest_files WHERE day = ?", [day]).fetchone() or (0, 0)
    share = _rate(quarantined, lines)
    return Measured(
        share <= s.max_quarantine_share,
        f"{quarantined} of {lines} lines quarantined ({share:.2%}, limit "
        f"{s.max_quarantine_share:.2%})",
        {"day": day.isoformat(), "lines": int(lines), "lines_quarantined": int(quarantined),
         "quarantine_share": round(share, 4), "limit": f"{s.max_quarantine_share:g}"})


def _day_runs(con: duckdb.DuckDBPyConnection, day: date) -> int:
    return int(db.scalar(con, "SELECT count(*) FROM runs WHERE day = ?", [day]))


def contract_violation_rate(con: duckdb.DuckDBPyConnection, day: date, s: Settings,
                            now: datetime, newest_landing_day: date | None) -> Measured:
    """Share of the day's runs with an error-severity contract finding."""
    runs = _day_runs(con, day)
    bad = int(db.scalar(con, "SELECT count(*) FROM v_contract_violations WHERE day = ?", [day]))
    rate = _rate(bad, runs)
    return Measured(
        rate <= s.max_contract_violation_rate,
        f"{bad} of {runs} runs broke their contract ({rate:.2%}, limit "
        f"{s.max_contract_violation_rate:.2%})",
        {"day": day.isoformat(), "runs": runs, "runs_violating": bad,
         "contract_violation_rate": round(rate, 4), "limit": f"{s.max_contract_violation_rate:g}"})


def truncation_rate(con: duckdb.DuckDBPyConnection, day: date, s: Settings,
                    now: datetime, newest_landing_day: date | None) -> Measured:
    """Share of the day's runs with at least one truncation finding (any layer)."""
    runs = _day_runs(con, day)
    cut = int(db.scalar(con, "SELECT count(DISTINCT v_truncations.run_id) FROM v_truncations "
                             "JOIN runs USING (run_id) WHERE runs.day = ?", [day]))
    rate = _rate(cut, runs)
    by_layer = dict(con.execute(
        "SELECT truncated_by, count(*) FROM v_truncations JOIN runs USING (run_id) "
        "WHERE runs.day = ? GROUP BY 1 ORDER BY 1", [day]).fetchall())
    return Measured(
        rate <= s.max_truncation_rate,
        f"{cut} of {runs} runs were truncated ({rate:.2%}, limit {s.max_truncation_rate:.2%})",
        {"day": day.isoformat(), "runs": runs, "runs_truncated": cut,
         "truncation_rate": round(rate, 4),
         "limit": f"{s.max_truncation_rate:g}",
         **{f"truncations/{k}": int(v) for k, v in by_layer.items()}})


def latest_day_is_fresh(con: duckdb.DuckDBPyConnection, day: date, s: Settings,
                        now: datetime, newest_landing_day: date | None) -> Measured:
    """The newest day with runs ended at most `freshness_hours` ago, checked on the newest
    day's partition only: an older day (a backfill) passes, naming the newest, so that a
    backfill of a month warns once, not once a day. The newest day is the newer of the lake's
    newest day with runs and `newest_landing_day` (the newest day the landing folder has files
    for): days ingested oldest first into an empty lake are each the lake's newest when their
    turn comes, yet only the last is the newest day there is, so a first `make run` warns as
    often as the next one (once)."""
    limit = f"{s.freshness_hours:g}"
    latest = db.scalar(con, "SELECT max(day) FROM runs")
    if latest is None:
        return Measured(False, "the lake has no runs yet", {"limit_hours": limit})
    newest = max(latest, newest_landing_day) if newest_landing_day else latest
    if day < newest:
        which = "with runs" if newest == latest else "in the landing folder"
        return Measured(True, f"{day.isoformat()} is not the newest day {which} "
                        f"({newest.isoformat()}): freshness is checked on the newest day",
                        {"latest_day": newest.isoformat(), "limit_hours": limit})
    ended = datetime.combine(latest + timedelta(days=1), datetime.min.time(), UTC)
    age = max(0.0, (now - ended).total_seconds() / 3600)
    return Measured(
        age <= s.freshness_hours,
        f"newest day {latest.isoformat()} ended {_age(age)} ago (limit {limit} h)",
        {"latest_day": latest.isoformat(), "age_hours": round(age, 1), "limit_hours": limit})


def _age(hours: float) -> str:
    """An age as the warning says it: in hours (one decimal) under two days, else in whole
    days, so that the same lake checked again the same day says the same words."""
    if hours < 48:
        return f"{hours:.1f} h"
    return f"{int(hours // 24)} days"


@dataclass(frozen=True)
class Check:
    name: str
    table: str
    """The lake table (Dagster asset) the check belongs to."""
    blocking: bool
    """A failure stops the warehouse from being published (Dagster: ERROR, else WARN)."""
    description: str
    measure: Callable[[duckdb.DuckDBPyConnection, date, Settings, datetime, date | None],
                      Measured]
    """(connection, day, settings, now, the newest day the landing folder has files for or
    None when not known) -> what it measured."""


CHECKS: tuple[Check, ...] = (
    Check("lines_accounted_for", "ingest_files", True,
          "Every input line is a row, a quarantine row or blank, and the lake holds those rows. "
          "ERROR: blocks publishing the warehouse.", lines_accounted_for),
    Check("quarantine_share_below_limit", "quarantine", False,
          "The day's quarantined lines stay under RUNLAKE_MAX_QUARANTINE_SHARE.",
          quarantine_share),
    Check("contract_violation_rate_below_limit", "runs", False,
          "The day's runs with an error-severity contract finding stay under "
          "RUNLAKE_MAX_CONTRACT_VIOLATION_RATE.", contract_violation_rate),
    Check("truncation_rate_below_limit", "runs", False,
          "The day's truncated runs stay under RUNLAKE_MAX_TRUNCATION_RATE.", truncation_rate),
    Check("latest_day_is_fresh", "runs", False,
          "The newest day with runs ended at most RUNLAKE_FRESHNESS_HOURS ago.",
          latest_day_is_fresh),
)
"""Every data check, in the order they run and are listed."""


def run_all(con: duckdb.DuckDBPyConnection, day: date, s: Settings,
            now: datetime | None = None,
            newest_landing_day: date | None = None) -> list[CheckOutcome]:
    """Every check of `day`'s partition; `newest_landing_day`: the newest day the landing
    folder has files for (freshness is judged on that day's partition only)."""
    now = now or datetime.now(UTC)
    out = []
    for c in CHECKS:
        m = c.measure(con, day, s, now, newest_landing_day)
        out.append(CheckOutcome(c.name, m.passed, c.blocking, m.summary, m.metadata))
    return out
