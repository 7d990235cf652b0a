"""What an ingest staged, counted before it commits: rows per table, findings and quarantine by
code, and the models the price table does not price on their day (the ingest summary, which
transforms.ingest copies into its IngestReport)."""

from dataclasses import dataclass
from pathlib import Path

import duckdb

from transforms import db, memory
from transforms.contracts.models import ModelTables
from transforms.contracts.schemas import MANIFEST, TABLES
from transforms.lake.core import scan_sql
from transforms.warehouse import lookups
from transforms.warehouse.sqlfiles import SQL_DIR

STAGED_TABLES = tuple(t for t in TABLES if t != MANIFEST)
"""The tables whose staged rows are counted: every lake table but the manifest."""


@dataclass(frozen=True)
class StagedCounts:
    """What one ingest staged."""

    rows: dict[str, int]
    """Rows per table (STAGED_TABLES)."""
    flags_by_code: dict[str, int]
    """Findings per code, each counted once (finding_scope in sql/macros)."""
    quarantine_by_code: dict[str, int]
    """Quarantined lines per error code."""
    unpriced_models: dict[str, int]
    """Models the price table does not price on their day, with how many runs and calls."""

_FINDINGS_BY_CODE = """
    WITH f AS ({flags}), s AS ({spans}), r AS ({runs}),
    by_trace AS (SELECT trace_id, min(run_id) AS run_id FROM r WHERE trace_id IS NOT NULL
                 GROUP BY 1 HAVING count(DISTINCT run_id) = 1),
    scoped AS (
        SELECT f.code, f.finding_key,
               finding_scope(coalesce(f.run_id, by_trace.run_id), s.trace_id,
                             f.finding_key) AS scope
        FROM f
        LEFT JOIN (SELECT span_id, any_value(trace_id) AS trace_id FROM s GROUP BY 1) s
          ON s.span_id = CASE WHEN f.run_id IS NULL THEN f.span_id END
        LEFT JOIN by_trace ON s.trace_id = by_trace.trace_id)
    SELECT code,
           count(*) FILTER (WHERE scope IS NULL)
           + count(DISTINCT (scope, finding_key)) FILTER (WHERE scope IS NOT NULL) AS n
    FROM scoped GROUP BY 1 ORDER BY 2 DESC, 1"""
"""Findings per code among the staged flags, a finding that LLM calls' prompts repeat counted
once per run (or trace), as the public flags view counts them (runs of earlier ingests are not
looked up)."""


def summarize(parts: Path, tables: ModelTables) -> StagedCounts:
    """Counts of what this ingest staged: rows per table, findings and quarantine by code, and
    the models the price table does not price on their day (a run's, an LLM call's own): not
    listed at all (`mystery-1`), or a day before the model's first period (`gpt-4o before
    2024-05-13`)."""
    plan = memory.budget()
    try:
        return _summarize(parts, tables, plan)
    except duckdb.Error as e:
        if memory.out_of_memory(e):
            raise memory.stopped("counting what it read", e, plan) from None
        raise


def _summarize(parts: Path, tables: ModelTables, plan: memory.Budget) -> StagedCounts:
    con = db.connect(memory_limit=plan.duckdb_limit)
    try:
        lookups.install(con, tables)
        for macro in ("canonical_model", "price_in_force", "finding_scope"):
            con.execute((SQL_DIR / "macros" / f"{macro}.sql").read_text())
        unpriced_models = dict(con.execute(f"""
            WITH named AS (
                SELECT model, day FROM ({scan_sql(parts, 'runs')})
                WHERE input_tokens IS NOT NULL OR output_tokens IS NOT NULL
                UNION ALL
                SELECT model, day FROM ({scan_sql(parts, 'llm_calls')})
                WHERE price IS NULL AND (input_tokens IS NOT NULL OR output_tokens IS NOT NULL)
            ), models_ AS (
                SELECT canonical_model(model) AS model, day, count(*) AS n FROM named
                WHERE model IS NOT NULL GROUP BY ALL
            ), unpriced AS (
                SELECT model, n FROM models_
                WHERE model IS NOT NULL AND NOT EXISTS (
                    SELECT 1 FROM model_prices AS p
                    WHERE p.model = models_.model
                      AND price_in_force(models_.day, p.price_from, p.price_to))
            ), firsts AS (
                SELECT model, min(price_from) AS price_from FROM model_prices GROUP BY model
            )
            SELECT CASE WHEN firsts.model IS NULL THEN unpriced.model
                        ELSE unpriced.model || ' before ' || strftime(firsts.price_from,
                                                                      '%Y-%m-%d') END,
                   sum(unpriced.n)::BIGINT AS n
            FROM unpriced LEFT JOIN firsts ON unpriced.model = firsts.model
            GROUP BY 1 ORDER BY n DESC, 1""").fetchall())
        rows = {t: int(db.scalar(con, f"SELECT count(*) FROM ({scan_sql(parts, t)})"))
                for t in STAGED_TABLES}
        flags_by_code = dict(con.execute(_FINDINGS_BY_CODE.format(
            flags=scan_sql(parts, "flags"), spans=scan_sql(parts, "spans"),
            runs=scan_sql(parts, "runs"))).fetchall())
        quarantine_by_code = dict(con.execute(
            f"SELECT error_code, count(*) FROM ({scan_sql(parts, 'quarantine')}) "
            "GROUP BY 1 ORDER BY 2 DESC").fetchall())
    finally:
        con.close()
    return StagedCounts(rows, flags_by_code, quarantine_by_code, unpriced_models)
