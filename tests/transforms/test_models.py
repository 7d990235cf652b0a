"""The model alias and price tables: canonical names, user tables that extend and override the
shipped ones, price periods, and bad tables refused with where."""

import json
import re
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from tests.conftest import REPO
from transforms import warehouse
from transforms.cli import app
from transforms.contracts import models
from transforms.errors import InputError
from transforms.warehouse import lookups


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
