"""The model alias and price tables: canonical names, costs with hand-computed numbers, the
ingest summary's unknown models, and overrides through the settings."""

import json
import re
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from tests.conftest import REPO, MemoryViews
from transforms import warehouse
from transforms.cli import app
from transforms.contracts import models
from transforms.contracts.schemas import VIEW_COLUMNS
from transforms.errors import InputError
from transforms.ingest import IngestReport
from transforms.lake import duckdb_type
from transforms.warehouse import lookups

DAY = "2026-11-20"
T0 = 1795136400000000000  # 2026-11-20T01:00:00Z in ns: the spans on their runs' day


def _canonical(tables: models.ModelTables, names: list[str | None]) -> list[str | None]:
    con = duckdb.connect()
    try:
        lookups.install(con, tables)
        con.execute((warehouse.SQL_DIR / "macros" / "canonical_model.sql").read_text())
        return [con.execute("SELECT canonical_model(?)", [n]).fetchone()[0] for n in names]
    finally:
        con.close()


CANONICAL = {
    "openai/gpt-5-mini": "gpt-5-mini",
    "gpt-5-mini-2026-08-07": "gpt-5-mini",
    "gpt-5-mini": "gpt-5-mini",
    "gpt-4o-mini": "gpt-4o-mini",
    "gpt-4o-mini-2024-07-18": "gpt-4o-mini",
    "gpt-4o-2024-08-06": "gpt-4o",
    "azure/gpt-4o": "gpt-4o",
    "chatgpt-4o-latest": "gpt-4o",
    "gpt-4.1-2025-04-14": "gpt-4.1",
    "gpt-4.1-mini": "gpt-4.1-mini",
    "o3-2025-04-16": "o3",
    "o4-mini": "o4-mini",
    "gpt-4-0613": "gpt-4",
    "gpt-3.5-turbo-0125": "gpt-3.5-turbo",
    "claude-3-5-sonnet-20241022": "claude-3-5-sonnet",
    "anthropic/claude-3-5-sonnet-20240620": "claude-3-5-sonnet",
    "claude-3-5-sonnet-latest": "claude-3-5-sonnet",
    "claude-sonnet-4-5-20250929": "claude-sonnet-4-5",
    "claude-sonnet-4-5": "claude-sonnet-4-5",
    "claude-haiku-4-5-20251001": "claude-haiku-4-5",
    "us.anthropic.claude-sonnet-4-5-20250929-v1:0": "claude-sonnet-4-5",
    "anthropic.claude-3-5-sonnet-20241022-v2:0": "claude-3-5-sonnet",
    "claude-3-5-sonnet-v2@20241022": "claude-3-5-sonnet",
    "google/gemini-2.5-flash": "gemini-2.5-flash",
    "models/gemini-2.5-pro": "gemini-2.5-pro",
    "gemini-2.0-flash-001": "gemini-2.0-flash",
    "gemini-2.5-flash-preview-05-20": "gemini-2.5-flash-preview",
    "openrouter/anthropic/claude-3.5-sonnet": "claude-3.5-sonnet",
    "llama-3.1-8b-instruct": "llama-3.1-8b-instruct",
    "": None,
    None: None,
}


def test_canonical_names() -> None:
    """Provider prefixes go, dated snapshots map to their family, sizes and tiers stay."""
    names = list(CANONICAL)
    assert dict(zip(names, _canonical(models.load(), names), strict=True)) == CANONICAL


def test_every_sample_model_is_priced() -> None:
    """Every model named in data_samples/ has a row in the shipped price table, with the day
    the prices were read and the provider's pricing page."""
    text = "".join(p.read_text(errors="replace") for p in (REPO / "data_samples").rglob("*")
                   if p.is_file() and p.suffix in (".jsonl", ".json"))
    names = sorted(set(re.findall(r'"(?:model|gen_ai\.request\.model)"\s*:\s*'
                                  r'(?:\{"stringValue"\s*:\s*)?"([^"]+)"', text)))
    assert "gpt-4o-mini" in names and "claude-sonnet-4-5" in names
    tables = models.load()
    priced = {p.model: p for p in tables.prices}
    assert set(_canonical(tables, list(names))) <= set(priced)
    for p in tables.prices:
        assert p.source_url.startswith("https://") and re.fullmatch(r"\d{4}-\d\d-\d\d",
                                                                    p.read_on)
        assert p.input_usd_per_mtok > 0 and p.output_usd_per_mtok > 0
        assert p.cached_input_usd_per_mtok is None or \
            p.cached_input_usd_per_mtok <= p.input_usd_per_mtok


def test_a_user_table_extends_and_overrides(tmp_path: Path) -> None:
    """A user's aliases win, its patterns are tried first, its prices replace those of the
    same model and add new ones."""
    aliases = tmp_path / "aliases.yaml"
    aliases.write_text("aliases:\n  gpt-4o-mini: gpt-4o-small\n"
                       "patterns:\n  - match: '(acme-[a-z]+)-v\\d+'\n    model: '\\1'\n"
                       "  - match: '(.+)-20\\d\\d-\\d\\d-\\d\\d'\n    model: 'dated-\\1'\n")
    prices = tmp_path / "prices.yaml"
    prices.write_text("providers:\n  contract:\n    source: https://example.com/our-contract\n"
                      "    read_on: 2026-11-01\n    models:\n"
                      "      gpt-4o: {input: 2, output: 8}\n"
                      "      acme-chat: {input: 1, cached_input: 0.5, output: 3}\n")
    tables = models.load(aliases, prices)
    assert _canonical(tables, ["gpt-4o-mini", "acme-chat-v3", "gpt-4o-2024-08-06",
                               "claude-3-5-sonnet-20241022"]) == [
        "gpt-4o-small", "acme-chat", "dated-gpt-4o", "claude-3-5-sonnet"]
    priced = {p.model: p for p in tables.prices}
    assert (priced["gpt-4o"].input_usd_per_mtok, priced["gpt-4o"].cached_input_usd_per_mtok,
            priced["gpt-4o"].read_on, priced["gpt-4o"].origin) == (2.0, None, "2026-11-01",
                                                                   str(prices))
    assert priced["acme-chat"].output_usd_per_mtok == 3.0
    assert priced["gpt-4o-mini"].origin == models.SHIPPED


@pytest.mark.parametrize("kind,text,message", [
    ("aliases", "patterns:\n  - match: '(unclosed'\n", "not a regular expression"),
    ("aliases", "patterns:\n  - match: '(?=lookahead)x'\n", "not a regular expression"),
    ("aliases", "aliases: [a, b]\n", "aliases maps"),
    ("aliases", "alias: {}\n", "unknown key 'alias'"),
    ("aliases", "aliases: {a: [", "not valid YAML"),
    ("prices", "providers:\n  p:\n    read_on: 2026-11-01\n    models:\n"
               "      m: {input: 1, output: 2}\n", "source"),
    ("prices", "providers:\n  p:\n    source: https://x\n    models:\n"
               "      m: {input: 1, output: 2}\n", "read_on"),
    ("prices", "providers:\n  p:\n    source: https://x\n    read_on: 2026-11-01\n    models:\n"
               "      m: {input: -1, output: 2}\n", "input must be a number"),
    ("prices", "providers:\n  p:\n    source: https://x\n    read_on: 2026-11-01\n    models:\n"
               "      m: {input: 1, outptu: 2}\n", "unknown key 'outptu'"),
])
def test_a_bad_table_is_refused_with_where(tmp_path: Path, kind: str, text: str,
                                           message: str) -> None:
    path = tmp_path / f"{kind}.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=re.escape(message)) as e:
        if kind == "aliases":
            models.load(aliases=path)
        else:
            models.load(prices=path)
    assert str(path) in str(e.value)


def test_the_shipped_gpt_4o_price_has_its_history() -> None:
    """gpt-4o holds two periods (launch on 2024-05-13 at 5.00/15.00 without a cached rate; from
    2024-10-02 2.50/1.25/10.00); every other shipped model one price for every day. In the
    model_prices table each period ends where the next begins."""
    tables = models.load()
    gpt_4o = [(p.price_from, p.input_usd_per_mtok, p.cached_input_usd_per_mtok,
               p.output_usd_per_mtok) for p in tables.prices if p.model == "gpt-4o"]
    assert gpt_4o == [("2024-05-13", 5.0, None, 15.0), ("2024-10-02", 2.5, 1.25, 10.0)]
    assert all(p.price_from is None for p in tables.prices if p.model != "gpt-4o")
    con = duckdb.connect()
    try:
        lookups.install(con, tables)
        assert con.execute("SELECT price_from::varchar, price_to::varchar FROM model_prices "
                           "WHERE model = 'gpt-4o' ORDER BY 1").fetchall() == [
            ("2024-05-13", "2024-10-02"), ("2024-10-02", None)]
        assert con.execute("SELECT count(*) FROM model_prices WHERE model <> 'gpt-4o' AND "
                           "(price_from IS NOT NULL OR price_to IS NOT NULL)").fetchall() == [
            (0,)]
    finally:
        con.close()


def test_a_user_table_with_periods_replaces_a_model_whole(tmp_path: Path) -> None:
    """A user's periods replace every shipped period of the model; dates may be quoted; a
    period's own source and read_on win over the provider's; a single price may start on a
    day; the tables round-trip through the JSON the lake stores."""
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "providers:\n  contract:\n    source: https://example.com/our-contract\n"
        "    read_on: 2026-11-01\n    models:\n"
        "      gpt-4o:\n"
        "        - {from: 2025-01-01, input: 3, output: 12}\n"
        "        - {from: '2025-07-01', input: 2, cached_input: 1, output: 8,\n"
        "           source: https://example.com/amendment-2, read_on: 2025-06-20}\n"
        "      acme-chat: {from: 2026-01-01, input: 1, output: 4}\n")
    tables = models.load(prices=prices)
    assert [p.price_from for p in tables.prices if p.model == "acme-chat"] == ["2026-01-01"]
    assert [(p.price_from, p.input_usd_per_mtok, p.cached_input_usd_per_mtok,
             p.output_usd_per_mtok, p.source_url, p.read_on, p.origin)
            for p in tables.prices if p.model == "gpt-4o"] == [
        ("2025-01-01", 3.0, None, 12.0, "https://example.com/our-contract", "2026-11-01",
         str(prices)),
        ("2025-07-01", 2.0, 1.0, 8.0, "https://example.com/amendment-2", "2025-06-20",
         str(prices))]
    assert models.ModelTables.from_json(tables.to_json()) == tables
    # Tables an ingest stored before prices had periods read as single prices.
    stored = json.loads(tables.to_json())
    for p in stored["prices"]:
        del p["price_from"]
    assert {p.price_from for p in models.ModelTables.from_json(json.dumps(stored)).prices} \
        == {None}


PERIODS = ("providers:\n  p:\n    source: https://x\n    read_on: 2026-11-01\n    models:\n"
           "      gpt-4o:\n")


@pytest.mark.parametrize("text,message", [
    (PERIODS + "        - {from: 2024-02-30, input: 5, output: 15}\n",
     "model 'gpt-4o': period 1: from must be a date (YYYY-MM-DD)"),
    (PERIODS + "        - {from: May 2024, input: 5, output: 15}\n",
     "model 'gpt-4o': period 1: from must be a date (YYYY-MM-DD)"),
    (PERIODS + "        - {from: 2024-10-02, input: 2.5, output: 10}\n"
               "        - {from: 2024-05-13, input: 5, output: 15}\n",
     "model 'gpt-4o': the periods are not in order of from: 2024-05-13 follows 2024-10-02"),
    (PERIODS + "        - {from: 2024-05-13, input: 5, output: 15}\n"
               "        - {from: 2024-05-13, input: 2.5, output: 10}\n",
     "model 'gpt-4o': two periods start on 2024-05-13"),
    (PERIODS + "        - {from: 2024-05-13, input: 5, output: 15}\n"
               "        - {from: 2024-10-02, input: 2.5, output: -10}\n",
     "model 'gpt-4o': period 2: output must be a number of USD per million tokens, from 0"),
    (PERIODS + "        - {from: 2024-05-13, input: 5, cached_input: true, output: 15}\n",
     "model 'gpt-4o': period 1: cached_input must be a number of USD per million tokens"),
    (PERIODS + "        - {form: 2024-05-13, input: 5, output: 15}\n",
     "model 'gpt-4o': period 1: unknown key 'form'"),
    (PERIODS + "        - {from: 2024-05-13, input: 5, output: 15}\n"
               "        - {input: 2.5, output: 10}\n",
     "model 'gpt-4o': period 2: from (YYYY-MM-DD, the first day of its prices) is missing"),
    (PERIODS + "        []\n", "model 'gpt-4o': the list of periods is empty"),
    (PERIODS + "        5\n", "model 'gpt-4o': expected {input, cached_input, output} or a "
                               "list of periods"),
    (PERIODS + "        {input: .nan, output: 15}\n",
     "model 'gpt-4o': input must be a number of USD per million tokens"),
    (PERIODS + "        {input: 5, output: .inf}\n",
     "model 'gpt-4o': output must be a number of USD per million tokens"),
    (PERIODS + "        - {from: 2024-05-13, input: 5, cached_input: -.inf, output: 15}\n",
     "model 'gpt-4o': period 1: cached_input must be a number of USD per million tokens"),
    (PERIODS + "        {input: 5, output: 1e400}\n",
     "model 'gpt-4o': output must be a number of USD per million tokens"),
    (PERIODS + "        {input: 5, output: 15, read_on: 2026-13-01}\n",
     "model 'gpt-4o': read_on must be a date (YYYY-MM-DD)"),
    ("providers:\n  p:\n    source: https://x\n    read_on: 2026-11-31\n    models: {}\n",
     "provider 'p': read_on must be a date (YYYY-MM-DD)"),
    ("providers:\n  p:\n    source: https://x\n    read_on: 2026-11-01\n    models:\n"
     "      m: {input: 1, output: 2}\n  q:\n    source: https://y\n    read_on: 2026-11-01\n"
     "    models:\n      m: {input: 1, output: 2}\n", "model 'm' is priced twice"),
    (PERIODS + "        {input: 5, output: 1.0e+308}\n",
     "model 'gpt-4o': output must be a number of USD per million tokens, from 0 to 10,000"),
    (PERIODS + "        - {from: 2024-05-13, input: 10000.01, output: 15}\n",
     "model 'gpt-4o': period 1: input must be a number of USD per million tokens, from 0"),
    (PERIODS + "        - {from: 2024-05-13, from: 2024-10-02, input: 5, output: 15}\n",
     "not valid YAML: the key 'from' is given twice in one mapping (line 7)"),
    (PERIODS + "        {input: 5, output: 15}\n      gpt-4o: {input: 1, output: 2}\n",
     "not valid YAML: the key 'gpt-4o' is given twice in one mapping (line 8)"),
])
def test_a_bad_price_period_is_refused_in_one_line(tmp_path: Path, home: Path, text: str,
                                                   message: str) -> None:
    """Bad dates, periods out of order or starting on one day, negative, non-numeric or absurd
    prices, unknown or repeated keys: an InputError naming the file and the model; the CLI
    tells it in one line and exits 2, without a traceback."""
    path = tmp_path / "prices.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as e:
        models.load(prices=path)
    assert str(e.value).startswith(f"{path}: ") and message in str(e.value), str(e.value)
    assert "\n" not in str(e.value)
    res = CliRunner().invoke(app, ["ingest", str(tmp_path), "--home", str(home),
                                   "--prices", str(path)])
    assert res.exit_code == 2, res.output
    assert message in res.output and "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)


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
