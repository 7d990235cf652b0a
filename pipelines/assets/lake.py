"""The lake tables as Dagster assets, partitioned by landing day, with their checks; and the
warehouse they publish.

The partitions are the UTC days the landing folder has files for (`YYYY-MM-DD` keys), added
as they are found by the landing sensor, by `python -m pipelines.materialize` (`make run`) and
by the nightly schedule: the UI shows the days that exist, nothing before the first one.
Materializing partition D ingests the landing files of day D (see `transforms.read.landing`):
one lake version, its derived tables included. It then runs the checks against the lake as it
now is (on warehouse.duckdb.staged, the warehouse file of that version built aside) and
reports per-table metadata for day D. The warehouse asset puts that file in place as
warehouse.duckdb, or builds it when another commit came between (and derives the tables
again when the SQL or the lookups changed); the blocking check `lines_accounted_for` keeps it
from running when the lake does not account for every line.
"""

import math
import warnings
from collections.abc import Iterable
from datetime import date
from typing import Any

import dagster as dg

from pipelines.resources import RunlakeResource
from transforms import db, warehouse
from transforms.contracts.schemas import TABLES
from transforms.ingest import ingest
from transforms.lake import Lake
from transforms.read.landing import files_by_day
from transforms.report import nightly
from transforms.settings import Settings
from transforms.verdict.verdict_row import REASON_WORDS, REASONS
from transforms.warehouse import checks

LAKE_GROUP = "lake"
WRITER_TAG = "runlake/writer"
"""Run tag of every run that writes the lake (the `ingest_day` job's). No limit is set on it:
day partitions ingest in parallel, as many at once as dagster.yaml's max_concurrent_runs, and
a lake commit that conflicts with another is retried."""

PARTITIONS = dg.DynamicPartitionsDefinition(name="landing_days")
"""One partition per UTC day the landing folder has files for, keyed `YYYY-MM-DD`; see
`add_landing_days`."""

BASELINE_DAYS = 7
"""Days before a partition's day that its per-agent-and-model pass rates are compared with
(the nightly report's baseline)."""


def add_landing_days(instance: dg.DagsterInstance, days: Iterable[date | str]) -> list[str]:
    """Add the days not yet partitions of `instance` (as `YYYY-MM-DD` keys); returns them."""
    keys = sorted({d.isoformat() if isinstance(d, date) else d for d in days})
    have = set(instance.get_dynamic_partitions(PARTITIONS.name or ""))
    new = [k for k in keys if k not in have]
    if new:
        instance.add_dynamic_partitions(PARTITIONS.name or "", new)
    return new


def partition_day(key: str) -> date:
    """The day of a partition key; a key that is not a `YYYY-MM-DD` day fails the run."""
    try:
        return date.fromisoformat(key)
    except ValueError:
        raise dg.Failure(f"partition {key!r} is not a landing day (YYYY-MM-DD); delete it "
                         "from the landing_days partitions") from None

# The checks and the table each belongs to (transforms.warehouse.checks.CHECKS).
CHECKS = {c.name: c.table for c in checks.CHECKS}


def day_check_spec(name: str, asset: str, description: str, blocking: bool) -> dg.AssetCheckSpec:
    """A check of one landing day: partitioned like its asset, so each result belongs to the
    day's partition and the UI plots its metadata against the landing day, not against the time
    it ran. Dagster marks a check's partitions_def a preview; that warning alone is silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return dg.AssetCheckSpec(name, asset=asset, description=description,
                                 blocking=blocking, partitions_def=PARTITIONS)


def _column_schema(table: str) -> dg.TableSchema:
    return dg.TableSchema(columns=[
        dg.TableColumn(c.name, str(c.type), description=c.doc) for c in TABLES[table].columns])


def _md(value: Any) -> str:
    """A value as plain text inside a markdown table cell (no markup, no HTML)."""
    text = "" if value is None else str(value)
    for ch in "\\|`*_[]<>#":
        text = text.replace(ch, "\\" + ch)
    return text.replace("\n", " ")[:80]


FAILED_STATUSES = ("error", "failed", "contract_violation")
"""Runs that did not pass: crashed (`error`), or graded and not passed (`failed`,
`contract_violation`; see `v_pass_rates`). Passed, skipped and ungraded runs are not failures."""
WORST_RUNS = 10
MD_INLINE = 1000
"""The UI shows a markdown value in place when it is shorter than this, else behind a
[Show Markdown] link: the tables are kept under it (regressed pairs and worst runs first)."""


def _md_table(lead: str, head: str, rows: list[str], total: int, what: str) -> str:
    """A markdown table of as many `rows` as keep it under MD_INLINE characters, introduced by
    `lead` and, when rows were left out, how many are shown of `total`."""
    for n in range(len(rows), 0, -1):
        shown = "" if n == total else f" ({n} {what} of {total} shown)"
        text = f"{lead}{shown}:\n\n{head}\n" + "\n".join(rows[:n])
        if len(text) < MD_INLINE or n == 1:
            return text
    return lead


def _worst_runs(con: Any, day: date) -> str:
    """The day's failed and errored runs, worst first: crashed before graded failures, then
    most error flags, lowest score, most flags."""
    statuses = ", ".join(f"'{s}'" for s in FAILED_STATUSES)
    where = f"FROM v_runs WHERE day = ? AND status IN ({statuses})"
    total = int(db.scalar(con, f"SELECT count(*) {where}", [day]))
    if not total:
        return "No failed or errored runs on this day."
    rows = con.execute(
        f"SELECT run_id, agent, model, status, score, n_error_flags, n_flags {where} "
        "ORDER BY status <> 'error', n_error_flags DESC, score NULLS FIRST, n_flags DESC, run_id "
        f"LIMIT {WORST_RUNS}", [day]).fetchall()
    head = ("| run_id | agent | model | status | score | error flags | flags |\n"
            "|---|---|---|---|---:|---:|---:|")
    return _md_table(f"{total} failed or errored runs, worst first", head,
                     ["| " + " | ".join(_md(v) for v in r) + " |" for r in rows], total, "worst")


def _rate(v: Any) -> str:
    return "–" if v is None else f"{100 * float(v):.0f}%"


def _pass_rates(con: Any, day: date) -> dict[str, Any]:
    """Per agent and model: `pass_rate/<agent>/<model>` for each pair with graded runs on the
    day, and a table of the day's pairs against the baseline with the regressed ones marked
    and first (the nightly report's verdict for the day)."""
    verdict = nightly.read(con, day, BASELINE_DAYS)
    pairs = sorted(verdict.pairs, key=lambda p: (not p.regressed, p.agent, p.model))
    meta: dict[str, Any] = {}
    rows = []
    for p in pairs:
        r = p.row
        if r["latest_pass_rate"] is not None:
            meta[f"pass_rate/{p.agent}/{p.model}"] = dg.MetadataValue.float(
                round(float(r["latest_pass_rate"]), 4))
        mark = ("**REGRESSED** (" + ", ".join(
            REASON_WORDS[x] for x in REASONS if x in p.reasons) + ")"
            if p.regressed else p.verdict.replace("_", " "))
        q_value = "–" if r["q_value"] is None else f"{float(r['q_value']):.2g}"
        rows.append("| " + " | ".join([
            mark, f"{_md(p.agent)} / {_md(p.model)}", str(r["runs_latest"]),
            _rate(r["latest_pass_rate"]), _rate(r["baseline_pass_rate"]), q_value]) + " |")
    meta["pass_rate_by_agent_model"] = dg.MetadataValue.md(_md_table(
        f"Pass rate over graded runs against {verdict.baseline_span()} "
        "(q: the same-cases test, corrected for the night's pairs)",
        "| verdict | agent / model | runs | pass rate | baseline | q |\n"
        "|---|---|---:|---:|---:|---:|", rows, len(rows), "pairs")
        if rows else "No runs on this day or in its baseline.")
    meta["regressed_pairs"] = len(verdict.regressed)
    return meta


def _day_metadata(con: Any, table: str, day: date, s: Settings) -> dict[str, Any]:
    # The rows the table keeps of the day; runs with those made from traces.
    rows = "intermediate.int_run_lines" if table == "runs" else f"staging.stg_{table}"
    meta: dict[str, Any] = {
        "dagster/row_count": int(db.scalar(
            con, f"SELECT count(*) FROM {rows} WHERE day = ?", [day])),
        "dagster/column_schema": _column_schema(table),
        "lake_path": dg.MetadataValue.path(Lake(s.home).uri(table)),
    }
    if table == "runs":
        graded, passed, tokens, p95 = con.execute(
            "SELECT count(*) FILTER (WHERE is_graded(status)), "
            "count(*) FILTER (WHERE status = 'passed'), "
            "avg(input_tokens + output_tokens), quantile_cont(agent_runtime_ms, 0.95) "
            "FROM runs WHERE day = ?", [day]).fetchone()
        meta.update({
            # Rounded for display: pass_rate 0.6596, tokens_per_run 10,391.
            "pass_rate": dg.MetadataValue.float(round(passed / graded, 4) if graded
                                                else math.nan),
            "graded_runs": int(graded),
            "tokens_per_run": dg.MetadataValue.int(round(tokens or 0)),
            "runtime_p95_ms": dg.MetadataValue.int(round(p95 or 0)),
            **_pass_rates(con, day),
            "worst_runs": dg.MetadataValue.md(_worst_runs(con, day)),
        })
    code_column = {"flags": "code", "quarantine": "error_code"}.get(table)
    if code_column:
        for code, n in con.execute(f"SELECT {code_column}, count(*) FROM {table} "
                                   "WHERE day = ? GROUP BY 1 ORDER BY 1", [day]).fetchall():
            meta[f"{table}/{code}"] = int(n)
    return meta


@dg.multi_asset(
    specs=[dg.AssetSpec(name, group_name=LAKE_GROUP, description=t.grain,
                        metadata={"dagster/column_schema": _column_schema(name)})
           for name, t in TABLES.items()],
    check_specs=[day_check_spec(c.name, c.table, c.description, c.blocking)
                 for c in checks.CHECKS],
    partitions_def=PARTITIONS,
    can_subset=False,
)
def lake_tables(context: dg.AssetExecutionContext, runlake: RunlakeResource):  # type: ignore[no-untyped-def]
    """Ingest one landing day's files into the lake (Delta tables partitioned by month; the
    rows go to the days of their runs, which may differ from the landing day)."""
    s = runlake.settings()
    day = partition_day(context.partition_key)
    landing_days = files_by_day(s.landing)
    files = landing_days.get(day, [])
    if files:
        report = ingest([f.path for f in files], s.home, workers=s.workers, build_views=False,
                        tools=s.tools, model_aliases=s.model_aliases, prices=s.prices,
                        deciding_evaluations=s.deciding_evaluations,
                        retention_hours=s.retention_hours)
        skipped = sum(f.skipped for f in report.files)
        context.log.info(f"{day}: {len(files)} files ({skipped} unchanged), "
                         f"{report.lines_read:,} lines read; rows on days "
                         f"{', '.join(d.isoformat() for d in report.days) or 'none'}")
        if report.unpriced_models:
            context.log.warning("models without a price (cost unknown; add them with "
                                "RUNLAKE_PRICES): " + ", ".join(
                                    f"{m} ({n:,})" for m, n in report.unpriced_models.items()))
    else:
        context.log.warning(f"{day}: no landing files under {s.landing} for this day")
    # The warehouse file of the new lake version, built aside once: the checks read it, and
    # the warehouse asset renames it into place (no second build). Live views in memory when
    # a table changed outside runlake's commits since.
    con = warehouse.staged(s.home) or warehouse.live(s.home)
    try:
        for name in TABLES:
            yield dg.MaterializeResult(asset_key=name,
                                       metadata=_day_metadata(con, name, day, s))
        # Freshness is judged on the newest landing day's partition only, whichever days
        # the lake already holds (a first `make run` ingests the days oldest first).
        for outcome in checks.run_all(con, day, s,
                                      newest_landing_day=max(landing_days, default=None)):
            yield dg.AssetCheckResult(
                asset_key=CHECKS[outcome.name], check_name=outcome.name,
                passed=outcome.passed, description=outcome.summary,
                severity=(dg.AssetCheckSeverity.ERROR if outcome.blocking
                          else dg.AssetCheckSeverity.WARN),
                metadata={"summary": outcome.summary, **outcome.metadata})
    finally:
        con.close()


@dg.asset(deps=list(TABLES), group_name="warehouse")
def warehouse_views(context: dg.AssetExecutionContext,
                    runlake: RunlakeResource) -> dg.MaterializeResult:
    """warehouse.duckdb: the views of the lake's newest version, built aside and renamed into
    place."""
    s = runlake.settings()
    path = warehouse.publish(s.home, s.retention_hours)
    con = warehouse.connect(s.home)
    try:
        n_runs, n_days, latest = con.execute(
            "SELECT count(*), count(DISTINCT day), max(day) FROM runs").fetchone() or (0, 0, None)
    finally:
        con.close()
    return dg.MaterializeResult(metadata={
        "path": dg.MetadataValue.path(str(path.resolve())), "runs": int(n_runs),
        "days": int(n_days), "latest_day": str(latest)})
