"""Every flag code is raised on its case and not on its near-miss: response lines
(cases/flag_cases.yaml) and span lines (cases/span_cases.yaml), each case one line."""

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from transforms.contracts.flags import CATALOG
from transforms.ingest import ingest
from transforms.warehouse import connect

CASE_DIR = Path(__file__).parent.parent / "cases"
CASES = yaml.safe_load((CASE_DIR / "flag_cases.yaml").read_text())
SPAN_CASES = yaml.safe_load((CASE_DIR / "span_cases.yaml").read_text())
# Codes covered elsewhere: run-vs-span reconciliation and spans out of their run's reach
# (tests/transforms/test_spans.py: both need runs beside the spans) and the durable state's
# schemaVersion (tests/transforms/test_durable.py); OTLP log records that are not evaluations
# (tests/transforms/test_trace_only_runs.py: an OTLP file).
ELSEWHERE = {"tokens_mismatch", "runtime_mismatch", "span_outside_run_window",
             "schema_version_invalid", "log_records_skipped"}
TOOLS = CASE_DIR / "tools.yaml"


def _line(case: dict[str, Any]) -> dict[str, Any]:
    line = case["line"]
    if "long_final_response" in case:
        line["response"]["final_response"] = "é" * case["long_final_response"]
    if "error_message_chars" in case:
        line["log_request"]["error_message"] = "x" * case["error_message_chars"]
    return line


def _flags_by_line(root: Path, cases: list[dict[str, Any]], name: str) -> dict[int, list[str]]:
    path = root / "landing" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text("".join(json.dumps(_line(c)) + "\n" for c in cases))
    ingest([path], root / "home", tools=TOOLS if name.endswith(".responses.jsonl") else None)
    con = connect(root / "home")
    rows = con.execute("SELECT source_line, code FROM flags WHERE source_file LIKE ? "
                       "ORDER BY 1, 2", [f"%{name}"]).fetchall()
    con.close()
    found: dict[int, list[str]] = {}
    for line, code in rows:
        found.setdefault(line, []).append(code)
    return found


@pytest.fixture(scope="module")
def case_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cases")


@pytest.fixture(scope="module")
def flags_by_line(case_root: Path) -> dict[int, list[str]]:
    """The flag codes of each response case's line, from a warehouse holding every case."""
    return _flags_by_line(case_root, CASES, "cases.responses.jsonl")


@pytest.fixture(scope="module")
def case_home(case_root: Path, flags_by_line: dict[int, list[str]]) -> Path:
    return case_root / "home"


@pytest.fixture(scope="module")
def span_flags_by_line(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[str]]:
    return _flags_by_line(tmp_path_factory.mktemp("spans"), SPAN_CASES, "cases.spans.jsonl")


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c["name"] for c in CASES])
def test_case_raises_exactly_its_flags(index: int, flags_by_line: dict[int, list[str]]) -> None:
    """The flags on a case's line are exactly the ones it expects (a near-miss expects none)."""
    case = CASES[index]
    assert flags_by_line.get(index + 1, []) == sorted(case["expect"]), case["name"]


@pytest.mark.parametrize("index", range(len(SPAN_CASES)), ids=[c["name"] for c in SPAN_CASES])
def test_span_case_raises_exactly_its_flags(index: int,
                                            span_flags_by_line: dict[int, list[str]]) -> None:
    """The flags on a span case's line are exactly the ones it expects."""
    case = SPAN_CASES[index]
    assert span_flags_by_line.get(index + 1, []) == sorted(case["expect"]), case["name"]


def test_every_code_has_a_case() -> None:
    """Each code of the catalog is raised by at least one case here or by its own test."""
    covered = {code for c in CASES + SPAN_CASES for code in c["expect"]}
    assert set(CATALOG) - covered - ELSEWHERE == set()
    assert covered <= set(CATALOG)


def test_later_duplicate_wins(case_home: Path) -> None:
    """runs holds the later line of a repeated run_id; the flag names both lines."""
    con = connect(case_home)
    rows = con.execute("SELECT agent, source_line FROM runs WHERE run_id = 'dup'").fetchall()
    detail = con.execute("SELECT detail FROM flags WHERE code = 'run_id_duplicate'").fetchone()
    con.close()
    names = [c["name"] for c in CASES]
    first = names.index("run-id-duplicate-first") + 1
    second = names.index("run-id-duplicate-second") + 1
    assert rows == [("b", second)]
    assert detail is not None
    assert f":{first} " in detail[0] and f":{second}," in detail[0]


def test_truncated_run_keeps_original_length(case_home: Path) -> None:
    """final_response_chars is the original length; the stored text stops at the limit."""
    con = connect(case_home)
    rows = con.execute(
        "SELECT run_id, final_response_chars, length(final_response), final_response_truncated "
        "FROM runs WHERE run_id LIKE '%final-response-%limit' ORDER BY 1").fetchall()
    con.close()
    assert rows == [("final-response-over-limit", 50_001, 50_000, True),
                    ("near-miss-final-response-at-limit", 50_000, 50_000, False)]
