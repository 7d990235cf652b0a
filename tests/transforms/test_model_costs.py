"""The model tables in the warehouse: one model is one group, a cost for every run with
hand-computed numbers, the ingest summary's unknown models, and tables and price periods given
through the settings at the next ingest."""

import json
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.conftest import MemoryViews
from transforms import warehouse
from transforms.cli import app
from transforms.contracts.schemas import VIEW_COLUMNS
from transforms.ingest import IngestReport
from transforms.lake import duckdb_type
from transforms.warehouse import lookups

DAY = "2026-11-20"
T0 = 1795136400000000000  # 2026-11-20T01:00:00Z in ns: the spans on their runs' day

def _span(span_id: str, trace_id: str, model: str, in_tok: int | None, out_tok: int | None,
          price: float | None = None, cached: int | None = None) -> dict[str, Any]:
    lr: dict[str, Any] = {"provider": "openai", "model": model,
                          "input": {"type": "chat", "messages": []},
                          "output": {"type": "chat", "messages": []},
                          "input_tokens": in_tok, "output_tokens": out_tok}
    if price is not None:
        lr["price"] = price
    attrs = {} if cached is None else {"gen_ai.usage.cache_read_input_tokens": cached}
    return {"name": "llm", "context": {"trace_id": trace_id, "span_id": span_id,
                                       "trace_state": ""},
            "kind": "SpanKind.CLIENT", "start_time": T0, "end_time": T0 + 10**9,
            "status": {"status_code": "StatusCode.OK"}, "attributes": attrs,
            "resource": {"attributes": {"service.name": "a"}}, "log_request": lr}


def _run(run_id: str, status: str, model: str | None = None, trace_id: str | None = None,
         tokens: tuple[int, int] | None = None, agent: str = "a") -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if model is not None:
        meta["model"] = model
    if tokens is not None:
        meta["total_input_tokens"], meta["total_output_tokens"] = tokens
    line: dict[str, Any] = {"run_id": run_id, "agent": agent, "started_at": f"{DAY}T01:00:00Z",
                            "outcome": {"status": status},
                            "response": {"final_response": "ok", "metadata": meta}}
    if trace_id is not None:
        line["trace_id"] = trace_id
    return line


def test_one_model_is_one_group(write_lines: Callable[..., Path],
                                views: MemoryViews) -> None:
    """A run whose only model is its spans' dated gpt-5-mini-2026-08-07 and one whose line says
    openai/gpt-5-mini are one group gpt-5-mini in every view that groups by model; the exact
    names stay in model_raw, response_model and llm_calls.model."""
    write_lines([_run("r1", "passed", trace_id="tr1"),
                 _run("r2", "failed", model="openai/gpt-5-mini", tokens=(1000, 100)),
                 _run("r3", "passed", model="gpt-5-mini")])
    spans = write_lines([_span("sp1", "tr1", "gpt-5-mini-2026-08-07", 100, 10)],
                        name="a.spans.jsonl")
    views.load(spans.parent)
    assert views("SELECT run_id, model, model_raw, response_model FROM runs ORDER BY 1") == [
        ("r1", "gpt-5-mini", "gpt-5-mini-2026-08-07", "gpt-5-mini-2026-08-07"),
        ("r2", "gpt-5-mini", "openai/gpt-5-mini", None),
        ("r3", "gpt-5-mini", "gpt-5-mini", None)]
    for view in ("v_pass_rates", "v_token_usage", "v_runtime", "v_flag_summary", "v_runs",
                 "v_tool_frequency"):
        models_ = {r[0] for r in views(f"SELECT DISTINCT model FROM {view}")}
        assert models_ <= {"gpt-5-mini"}, view
    assert views("SELECT model, n_runs, n_graded, n_passed FROM v_pass_rates") == [
        ("gpt-5-mini", 3, 3, 2)]
    assert views("SELECT model, canonical_model FROM llm_calls") == [
        ("gpt-5-mini-2026-08-07", "gpt-5-mini")]
    assert views("SELECT count(*) FROM regressions(DATE '2026-11-20', 7)") == [(1,)]


def test_cost_for_every_run(write_lines: Callable[..., Path],
                            run_ingest: Callable[..., IngestReport],
                            query: Callable[..., list[tuple[Any, ...]]]) -> None:
    """Hand-computed costs (gpt-4o: 2.50 in, 1.25 cached, 10.00 out per million tokens;
    gpt-5-mini: 0.25, 0.025, 2.00): a response-only run from its token totals (table), a span
    run with the source's price (source), a span run without one (table, cached input at the
    cached rate), a run mixing both (table), and an unknown model (null, listed once)."""
    write_lines([
        _run("resp", "passed", model="gpt-4o-2024-08-06", tokens=(1000, 500)),
        _run("src", "passed", model="gpt-4o", trace_id="t-src", tokens=(999, 1)),
        _run("tab", "passed", trace_id="t-tab"),
        _run("mix", "failed", model="gpt-5-mini", trace_id="t-mix"),
        _run("unk1", "passed", model="acme/mystery-1", tokens=(10, 1)),
        _run("unk2", "failed", model="mystery-1", tokens=(20, 2)),
        _run("none", "passed", model="gpt-4o"),
    ])
    spans = write_lines([
        _span("s1", "t-src", "gpt-4o", 1000, 100, price=0.123),
        _span("s2", "t-tab", "gpt-4o-2024-11-20", 2000, 100, cached=1000),
        _span("s3", "t-mix", "gpt-5-mini", 1000, 100, price=0.01),
        _span("s4", "t-mix", "gpt-5-mini-2026-08-07", 4000, 1000, cached=2000),
    ], name="a.spans.jsonl")
    report = run_ingest(spans.parent)
    got = {r[0]: r[1:] for r in query(
        "SELECT run_id, model, cost_usd, price_source, llm_price FROM runs")}
    # resp: (1000 * 2.50 + 500 * 10.00) / 1e6, no cache split in token totals.
    assert got["resp"] == ("gpt-4o", pytest.approx(0.0075), "table", None)
    # src: the span's own price wins over the line's token totals.
    assert got["src"] == ("gpt-4o", pytest.approx(0.123), "source", pytest.approx(0.123))
    # tab: (1000 * 2.50 + 1000 * 1.25 + 100 * 10.00) / 1e6
    assert got["tab"] == ("gpt-4o", pytest.approx(0.00475), "table", pytest.approx(0.00475))
    # mix: 0.01 + (2000 * 0.25 + 2000 * 0.025 + 1000 * 2.00) / 1e6 = 0.01 + 0.00255
    assert got["mix"] == ("gpt-5-mini", pytest.approx(0.01255), "table",
                          pytest.approx(0.01255))
    assert got["unk1"] == ("mystery-1", None, None, None)
    assert got["unk2"] == ("mystery-1", None, None, None)
    assert got["none"] == ("gpt-4o", None, None, None)
    assert query("SELECT span_id, price_source FROM llm_calls ORDER BY 1") == [
        ("s1", "source"), ("s2", "table"), ("s3", "source"), ("s4", "table")]
    assert report.unpriced_models == {"mystery-1": 2}
    usage = {r[0]: r[1:] for r in query(
        "SELECT model, n_runs, price, cost_usd_total, cost_usd_per_run, n_runs_costed "
        "FROM v_token_usage")}
    # resp + src + tab: 0.0075 + 0.123 + 0.00475; price sums the LLM calls only.
    assert usage["gpt-4o"] == (4, pytest.approx(0.12775), pytest.approx(0.13525),
                               pytest.approx(0.13525 / 3), 3)
    assert usage["mystery-1"] == (2, None, None, None, 0)


def test_the_summary_names_unknown_models_once(write_lines: Callable[..., Path],
                                               home: Path) -> None:
    path = write_lines([_run("u1", "passed", model="mystery-1", tokens=(10, 1)),
                        _run("u2", "passed", model="openai/mystery-1", tokens=(10, 1)),
                        _run("k1", "passed", model="gpt-4o", tokens=(10, 1))])
    res = CliRunner().invoke(app, ["ingest", str(path), "--home", str(home)])
    assert res.exit_code == 0, res.output
    line = next(ln for ln in res.output.splitlines() if "without a price" in ln)
    assert line.count("mystery-1") == 1 and "mystery-1 (2)" in line and "gpt-4o" not in line


def test_overrides_through_the_settings_apply_at_the_next_ingest(
        write_lines: Callable[..., Path], home: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """RUNLAKE_MODEL_ALIASES and RUNLAKE_PRICES take effect at the next ingest, which reads no
    file again: only the views are computed again."""
    path = write_lines([_run("r1", "passed", model="acme-chat-v2", tokens=(1_000_000, 100_000)),
                        _run("r2", "passed", model="gpt-4o", tokens=(1_000_000, 0))])
    runner = CliRunner()
    res = runner.invoke(app, ["ingest", str(path), "--home", str(home)])
    assert res.exit_code == 0 and "acme-chat-v2 (1)" in res.output

    def runs() -> list[tuple[Any, ...]]:
        con = warehouse.connect(home)
        try:
            return con.execute("SELECT run_id, model, cost_usd, price_source FROM runs "
                               "ORDER BY 1").fetchall()
        finally:
            con.close()

    assert runs() == [("r1", "acme-chat-v2", None, None), ("r2", "gpt-4o", 2.5, "table")]
    aliases = tmp_path / "aliases.yaml"
    aliases.write_text("patterns:\n  - match: '(acme-chat)-v\\d+'\n")
    prices = tmp_path / "prices.yaml"
    prices.write_text("providers:\n  acme:\n    source: https://acme.example/pricing\n"
                      "    read_on: 2026-11-20\n    models:\n"
                      "      acme-chat: {input: 1.0, output: 4.0}\n"
                      "      gpt-4o: {input: 2.0, output: 8.0}\n")
    monkeypatch.setenv("RUNLAKE_MODEL_ALIASES", str(aliases))
    monkeypatch.setenv("RUNLAKE_PRICES", str(prices))
    res = runner.invoke(app, ["ingest", str(path), "--home", str(home)])
    assert res.exit_code == 0, res.output
    assert "1 file (1 unchanged)" in res.output, res.output
    assert "views computed again" in res.output
    assert "without a price" not in res.output
    assert runs() == [("r1", "acme-chat", 1.4, "table"), ("r2", "gpt-4o", 2.0, "table")]
    con = warehouse.connect(home)
    try:
        assert con.execute("SELECT source_url, read_on::varchar, origin FROM model_prices "
                           "WHERE model = 'gpt-4o'").fetchall() == [
            ("https://acme.example/pricing", "2026-11-20", str(prices))]
    finally:
        con.close()
    stored = json.loads((home / "lake" / lookups.STORED).read_text())
    assert any(p["model"] == "acme-chat" for p in stored["prices"])


def test_view_only_columns_are_in_the_views(tmp_path: Path) -> None:
    """The columns schemas.VIEW_COLUMNS documents exist in the views with their types."""
    warehouse.build(tmp_path)
    con = warehouse.connect(tmp_path)
    try:
        for table, cols in VIEW_COLUMNS.items():
            have = dict(con.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = 'main' AND table_name = ?", [table]).fetchall())
            for c in cols:
                assert have.get(c.name) == duckdb_type(c.type), (table, c.name)
    finally:
        con.close()


def _on(line: dict[str, Any], day: str) -> dict[str, Any]:
    """A run line (or span) moved to 01:00 UTC of another day."""
    if "started_at" in line:
        return {**line, "started_at": f"{day}T01:00:00Z"}
    start = T0 + (date.fromisoformat(day) - date.fromisoformat(DAY)).days * 86_400 * 10**9
    return {**line, "start_time": start, "end_time": start + 10**9}


def test_price_periods_through_the_settings(write_lines: Callable[..., Path], home: Path,
                                            tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """RUNLAKE_PRICES with periods (acme-chat: P1 from 2026-11-01 at 1.00 input, 4.00 output;
    P2 from 2026-11-15 at 0.50 input, 0.25 cached input, 2.00 output USD per million tokens):
    each run is priced at the period of its day, a day before P1 has no price and the ingest
    lists it; editing the file prices the history again at the next ingest."""
    prices = tmp_path / "prices.yaml"

    def write_prices(p1_input: float) -> None:
        prices.write_text(
            "providers:\n  acme:\n    source: https://acme.example/pricing\n"
            "    read_on: 2026-11-20\n    models:\n      acme-chat:\n"
            f"        - {{from: 2026-11-01, input: {p1_input}, output: 4.0}}\n"
            "        - {from: 2026-11-15, input: 0.5, cached_input: 0.25, output: 2.0}\n")

    write_prices(1.0)
    monkeypatch.setenv("RUNLAKE_PRICES", str(prices))
    write_lines([_on(_run("before", "passed", "acme-chat", tokens=(1_000_000, 100_000)),
                     "2026-10-31"),
                 _on(_run("eve", "passed", "acme-chat", tokens=(1_000_000, 100_000)),
                     "2026-11-14"),
                 _on(_run("change", "passed", "acme-chat", tokens=(1_000_000, 100_000)),
                     "2026-11-15"),
                 _on(_run("spans", "passed", trace_id="t-spans"), "2026-11-15")])
    path = write_lines([_on(_span("s1", "t-spans", "acme-chat", 1_000_000, 100_000,
                                  cached=600_000), "2026-11-15")], name="a.spans.jsonl")
    runner = CliRunner()
    res = runner.invoke(app, ["ingest", str(path.parent), "--home", str(home)])
    assert res.exit_code == 0, res.output
    line = next(ln for ln in res.output.splitlines() if "without a price" in ln)
    assert "acme-chat before 2026-11-01 (1)" in line and line.count("acme-chat") == 1, line

    def runs() -> dict[str, tuple[Any, ...]]:
        con = warehouse.connect(home)
        try:
            return {r[0]: r[1:] for r in con.execute(
                "SELECT run_id, cost_usd, price_source, price_from::varchar FROM runs"
            ).fetchall()}
        finally:
            con.close()

    got = runs()
    assert got["before"] == (None, None, None)
    # eve: 1,000,000 * 1.00 / 1e6 + 100,000 * 4.00 / 1e6 = 1.0 + 0.4
    assert got["eve"] == (pytest.approx(1.4), "table", "2026-11-01")
    # change: 1,000,000 * 0.50 / 1e6 + 100,000 * 2.00 / 1e6 = 0.5 + 0.2
    assert got["change"] == (pytest.approx(0.7), "table", "2026-11-15")
    # spans: (400,000 * 0.50 + 600,000 cached * 0.25 + 100,000 * 2.00) / 1e6 = 0.2 + 0.15 + 0.2
    assert got["spans"] == (pytest.approx(0.55), "table", "2026-11-15")
    con = warehouse.connect(home)
    try:
        assert con.execute("SELECT price_from::varchar, price_to::varchar, input_usd_per_mtok "
                           "FROM model_prices WHERE model = 'acme-chat' ORDER BY 1").fetchall() \
            == [("2026-11-01", "2026-11-15", 1.0), ("2026-11-15", None, 0.5)]
        assert con.execute("SELECT price, price_source, price_from::varchar FROM llm_calls"
                           ).fetchall() == [(pytest.approx(0.55), "table", "2026-11-15")]
    finally:
        con.close()
    write_prices(2.0)
    res = runner.invoke(app, ["ingest", str(path.parent), "--home", str(home)])
    assert res.exit_code == 0 and "views computed again" in res.output, res.output
    got = runs()
    # eve again: 1,000,000 * 2.00 / 1e6 + 0.4; the runs of P2's days keep their cost.
    assert got["eve"] == (pytest.approx(2.4), "table", "2026-11-01")
    assert got["change"] == (pytest.approx(0.7), "table", "2026-11-15")
    assert got["before"] == (None, None, None)
