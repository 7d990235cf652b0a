"""The model alias table and the price table: which canonical model a model name stands for,
and what its tokens cost.

Both ship as data files (`transforms/data/model_aliases.yaml`, `model_prices.yaml`, whose
headers describe their format; the price table's is checked in transforms.contracts.prices:
a model has one price, or periods of prices over time) and can be extended or overridden by a
user file of the same format (settings `model_aliases` / `prices`, i.e. RUNLAKE_MODEL_ALIASES /
RUNLAKE_PRICES).

They are applied when the warehouse is built, never at ingest: the lake keeps the model
strings and prices the sources gave, and the views resolve them (`canonical_model()` in
sql/macros, `intermediate.int_model_names`, the `model_aliases` and `model_prices` tables that
transforms.warehouse.lookups installs). Each ingest stores the tables it was given in
`lake/_models/tables.json` (transforms.warehouse.lookups.store); a change makes the lake's
fingerprint change, so that ingest recomputes the derived tables and the views without reading
any input file again.
"""

import hashlib
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import duckdb
import yaml

from transforms.contracts import prices as price_table
from transforms.contracts import yamlfile
from transforms.contracts.prices import Price
from transforms.errors import InputError

DATA_DIR = Path(__file__).resolve().parents[1] / "data"
ALIASES_FILE = DATA_DIR / "model_aliases.yaml"
PRICES_FILE = DATA_DIR / "model_prices.yaml"
SHIPPED = "runlake"
"""The origin of the shipped tables' entries (a user file's entries name the file)."""


@dataclass(frozen=True)
class Alias:
    kind: str
    """exact (alias is a name) or pattern (alias is a regular expression)."""
    alias: str
    model: str
    """The canonical model; for a pattern, a replacement in which \\1 is the first group."""
    position: int
    """Patterns are tried in this order (a user file's first)."""
    origin: str
    """The file the entry came from."""


@dataclass(frozen=True)
class ModelTables:
    aliases: tuple[Alias, ...]
    prices: tuple[Price, ...]

    def to_json(self) -> str:
        return json.dumps({"aliases": [asdict(a) for a in self.aliases],
                           "prices": [asdict(p) for p in self.prices]},
                          sort_keys=True, indent=1)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.to_json().encode()).hexdigest()

    @classmethod
    def from_json(cls, text: str) -> "ModelTables":
        doc = json.loads(text)
        return cls(tuple(Alias(**a) for a in doc["aliases"]),
                   tuple(Price(**p) for p in doc["prices"]))


class _Loader(yamlfile.Loader):
    """YAML's safe loader, with dates kept as text: the tables' contracts check them, so that a
    day that does not exist (2024-02-30) is reported with its model, not as a crash."""


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _Loader.construct_yaml_str)


def _read_yaml(path: Path, what: str) -> dict[str, Any]:
    try:
        doc = yaml.load(path.read_bytes(), Loader=_Loader)  # noqa: S506 (a safe loader)
    except OSError as e:
        raise InputError(f"{path}: cannot read the {what} ({e.strerror})") from None
    except yaml.YAMLError as e:
        raise InputError(f"{path}: not valid YAML: {str(e).splitlines()[0]}") from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise InputError(f"{path}: the {what} is a YAML mapping (see {_shipped(what)})")
    return doc


def _shipped(what: str) -> str:
    return f"transforms/data/{ALIASES_FILE.name if 'alias' in what else PRICES_FILE.name}"


def _check_patterns(path: Path, patterns: list[tuple[str, str]]) -> None:
    """Each pattern is a regular expression DuckDB (RE2) accepts, and its replacement works."""
    if not patterns:
        return
    con = duckdb.connect()
    try:
        for pattern, model in patterns:
            try:
                con.execute("SELECT regexp_full_match('x', ?), regexp_replace('x', ?, ?)",
                            [pattern, f"^(?:{pattern})$", model]).fetchall()
            except duckdb.Error as e:
                raise InputError(f"{path}: pattern {pattern[:80]!r} is not a regular "
                                 "expression runlake can use (RE2): "
                                 f"{str(e).splitlines()[0][:200]}") from None
    finally:
        con.close()


def _aliases(path: Path) -> tuple[dict[str, str], list[tuple[str, str]]]:
    doc = _read_yaml(path, "model alias table")
    unknown = set(doc) - {"aliases", "patterns"}
    if unknown:
        raise InputError(f"{path}: unknown key {sorted(unknown)[0]!r} (expected aliases, "
                         "patterns)")
    exact = doc.get("aliases") or {}
    if not isinstance(exact, dict) or not all(
            isinstance(k, str) and k and isinstance(v, str) and v for k, v in exact.items()):
        raise InputError(f"{path}: aliases maps model names to canonical model names "
                         "(text: text)")
    patterns = doc.get("patterns") or []
    if not isinstance(patterns, list):
        raise InputError(f"{path}: patterns is a list of {{match, model}}")
    out: list[tuple[str, str]] = []
    for i, p in enumerate(patterns):
        if not isinstance(p, dict) or not isinstance(p.get("match"), str) or not p["match"] \
                or not isinstance(p.get("model", "\\1"), str):
            raise InputError(f"{path}: pattern {i}: expected {{match: REGEX, model: "
                             "REPLACEMENT}")
        out.append((p["match"], p.get("model", "\\1")))
    _check_patterns(path, out)
    return dict(exact), out


def load(aliases: Path | None = None, prices: Path | None = None) -> ModelTables:
    """The shipped tables, extended or overridden by the user's files when given; an
    InputError says what is wrong and where."""
    exact, patterns = _aliases(ALIASES_FILE)
    origin = dict.fromkeys(exact, SHIPPED)
    pattern_rows = [(m, r, SHIPPED) for m, r in patterns]
    if aliases is not None:
        user_exact, user_patterns = _aliases(aliases)
        exact.update(user_exact)
        origin.update(dict.fromkeys(user_exact, str(aliases)))
        pattern_rows = [(m, r, str(aliases)) for m, r in user_patterns] + pattern_rows
    alias_rows = [Alias("exact", k, v, 0, origin[k]) for k, v in sorted(exact.items())]
    alias_rows += [Alias("pattern", m, r, i, o) for i, (m, r, o) in enumerate(pattern_rows)]
    by_model = _by_model(replace(p, origin=SHIPPED) for p in _prices(PRICES_FILE))
    if prices is not None:
        by_model.update(_by_model(_prices(prices)))
    return ModelTables(tuple(alias_rows), tuple(p for m in sorted(by_model) for p in by_model[m]))


def _prices(path: Path) -> list[Price]:
    return price_table.parse(path, _read_yaml(path, "price table"))


def _by_model(rows: Iterable[Price]) -> dict[str, list[Price]]:
    """Each model's prices, in order of price_from: a user's file replaces a model's shipped
    prices whole, periods and all."""
    out: dict[str, list[Price]] = {}
    for p in rows:
        out.setdefault(p.model, []).append(p)
    return out
