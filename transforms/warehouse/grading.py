"""Which evaluations decide the status of a run made from a trace: by default every evaluation
whose label says pass or fail (sql/macros/score_verdict.sql); with `RUNLAKE_DECIDING_EVALUATIONS`
(or `runlake ingest --deciding-evaluations`), only those of these names (gen_ai.evaluation.name),
so that an informational grader (a tone score, a toxicity label) fails no run.

The names the last ingest was given are stored with the lake (`lake/_grading/evaluations.json`)
and installed as the `deciding_evaluations` lookup table of every warehouse build (empty: every
evaluation decides); a change re-derives every week, as a change of the price table does."""

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

import duckdb

from transforms.errors import InputError
from transforms.lake import GRADING

if TYPE_CHECKING:
    from transforms.lake.store import Store

MAX_NAMES = 1_000


def parse(text: str | Sequence[str] | None) -> tuple[str, ...]:
    """The names of a comma-separated setting (or a list of them), sorted, without repeats;
    InputError for a name that is empty between two commas or too many names."""
    if text is None:
        return ()
    parts = text.split(",") if isinstance(text, str) else list(text)
    names = [p.strip() for p in parts]
    if names == [""]:
        return ()
    if any(not n for n in names):
        raise InputError("the deciding evaluations name an empty evaluation: give names "
                         "separated by commas, as in correctness,safety")
    if len(set(names)) > MAX_NAMES:
        raise InputError(f"the deciding evaluations name {len(set(names)):,} evaluations; at "
                         f"most {MAX_NAMES:,} are taken")
    return tuple(sorted(set(names)))


def stored(lake: "Store") -> tuple[str, ...]:
    """The names the last ingest stored (none: every evaluation decides)."""
    try:
        data = json.loads(lake.read_text(*GRADING.split("/")))
    except FileNotFoundError:
        return ()
    names = data.get("deciding_evaluations") if isinstance(data, dict) else None
    return tuple(n for n in names if isinstance(n, str)) if isinstance(names, list) else ()


def store(lake: "Store", names: tuple[str, ...]) -> bool:
    """Store the names with the lake when they differ from the stored ones; True when they
    changed."""
    if stored(lake) == names:
        return False
    text = json.dumps({"deciding_evaluations": list(names)}, indent=1) + "\n"
    lake.write_bytes(text.encode(), *GRADING.split("/"))
    return True


def install(con: duckdb.DuckDBPyConnection, names: tuple[str, ...]) -> None:
    """The deciding_evaluations lookup table: one row per name (none: every evaluation)."""
    from transforms.warehouse.lookups import insert

    con.execute("CREATE TABLE deciding_evaluations (name VARCHAR PRIMARY KEY)")
    insert(con, "deciding_evaluations", [[n] for n in names])
