"""The pipeline's data checks: each measures one day (or the whole lake) against a limit from
the settings and says what it measured. Dagster reports them as asset checks; they read a
`warehouse.live` connection, so they judge the lake before the warehouse is published."""

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

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


def _rate(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def lines_accounted_for(con: duckdb.DuckDBPyConnection) -> CheckOutcome:
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
    return CheckOutcome("lines_accounted_for", not bad, True,
                        f"{len(bad)} of {n_files} files break the line accounting", meta)


def quarantine_share(con: duckdb.DuckDBPyConnection, day: date, s: Settings) -> CheckOutcome:
    """Share of the day's input lines that were quarantined."""
    lines, quarantined = con.execute(
        "SELECT coalesce(sum(lines), 0), coalesce(sum(lines_quarantined), 0) "
        "FROM staging.stg_ingest_files WHERE day = ?", [day]).fetchone() or (0, 0)
    share = _rate(quarantined, lines)
    return CheckOutcome(
        "quarantine_share_below_limit", share <= s.max_quarantine_share, False,
        f"{quarantined} of {lines} lines quarantined ({share:.2%}, limit "
        f"{s.max_quarantine_share:.2%})",
        {"day": day.isoformat(), "lines": int(lines), "lines_quarantined": int(quarantined),
         "quarantine_share": share, "limit": s.max_quarantine_share})


def _day_runs(con: duckdb.DuckDBPyConnection, day: date) -> int:
    return int(db.scalar(con, "SELECT count(*) FROM runs WHERE day = ?", [day]))


def contract_violation_rate(con: duckdb.DuckDBPyConnection, day: date,
                            s: Settings) -> CheckOutcome:
    """Share of the day's runs with an error-severity contract finding."""
    runs = _day_runs(con, day)
    bad = int(db.scalar(con, "SELECT count(*) FROM v_contract_violations WHERE day = ?", [day]))
    rate = _rate(bad, runs)
    return CheckOutcome(
        "contract_violation_rate_below_limit", rate <= s.max_contract_violation_rate, False,
        f"{bad} of {runs} runs broke their contract ({rate:.2%}, limit "
        f"{s.max_contract_violation_rate:.2%})",
        {"day": day.isoformat(), "runs": runs, "runs_violating": bad,
         "contract_violation_rate": rate, "limit": s.max_contract_violation_rate})


def truncation_rate(con: duckdb.DuckDBPyConnection, day: date, s: Settings) -> CheckOutcome:
    """Share of the day's runs with at least one truncation finding (any layer)."""
    runs = _day_runs(con, day)
    cut = int(db.scalar(con, "SELECT count(DISTINCT v_truncations.run_id) FROM v_truncations "
                             "JOIN runs USING (run_id) WHERE runs.day = ?", [day]))
    rate = _rate(cut, runs)
    by_layer = dict(con.execute(
        "SELECT truncated_by, count(*) FROM v_truncations JOIN runs USING (run_id) "
        "WHERE runs.day = ? GROUP BY 1 ORDER BY 1", [day]).fetchall())
    return CheckOutcome(
        "truncation_rate_below_limit", rate <= s.max_truncation_rate, False,
        f"{cut} of {runs} runs were truncated ({rate:.2%}, limit {s.max_truncation_rate:.2%})",
        {"day": day.isoformat(), "runs": runs, "runs_truncated": cut, "truncation_rate": rate,
         "limit": s.max_truncation_rate,
         **{f"truncations/{k}": int(v) for k, v in by_layer.items()}})


def latest_day_is_fresh(con: duckdb.DuckDBPyConnection, s: Settings,
                        now: datetime | None = None) -> CheckOutcome:
    """The newest day with runs ended at most `freshness_hours` ago."""
    now = now or datetime.now(UTC)
    latest = db.scalar(con, "SELECT max(day) FROM runs")
    if latest is None:
        return CheckOutcome("latest_day_is_fresh", False, False, "the lake has no runs yet",
                            {"limit_hours": s.freshness_hours})
    ended = datetime.combine(latest + timedelta(days=1), datetime.min.time(), UTC)
    age = max(0.0, (now - ended).total_seconds() / 3600)
    return CheckOutcome(
        "latest_day_is_fresh", age <= s.freshness_hours, False,
        f"newest day {latest.isoformat()} ended {age:.1f} h ago (limit {s.freshness_hours} h)",
        {"latest_day": latest.isoformat(), "age_hours": age, "limit_hours": s.freshness_hours})


def run_all(con: duckdb.DuckDBPyConnection, day: date, s: Settings,
            now: datetime | None = None) -> list[CheckOutcome]:
    return [lines_accounted_for(con), quarantine_share(con, day, s),
            contract_violation_rate(con, day, s), truncation_rate(con, day, s),
            latest_day_is_fresh(con, s, now)]
