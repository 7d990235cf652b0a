"""`passed` given as something other than a JSON boolean: the unambiguous spellings (1 and 0,
"true"/"false", "yes"/"no", "pass"/"fail", "passed"/"failed", "1"/"0", any case) are read as
the outcome they spell with an envelope_malformed finding; anything else leaves the run
ungraded with a finding naming the value. None is lost silently, and `runlake validate` says
so for every one of them."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.conftest import MemoryViews
from transforms.cli import app

CASES: list[tuple[Any, str, str | None]] = [
    (True, "passed", None),
    (False, "failed", None),
    ("false", "failed", "passed 'false' is not a boolean; read as false"),
    ("TRUE", "passed", "passed 'TRUE' is not a boolean; read as true"),
    (" No ", "failed", "passed ' No ' is not a boolean; read as false"),
    ("fail", "failed", "passed 'fail' is not a boolean; read as false"),
    ("Passed", "passed", "passed 'Passed' is not a boolean; read as true"),
    ("0", "failed", "passed '0' is not a boolean; read as false"),
    (1, "passed", "passed 1 is not a boolean; read as true"),
    (0, "failed", "passed 0 is not a boolean; read as false"),
    (2, "ungraded", "passed 2 is not a boolean; the run is ungraded"),
    (0.5, "ungraded", "passed 0.5 is not a boolean; the run is ungraded"),
    ("maybe", "ungraded", "passed 'maybe' is not a boolean; the run is ungraded"),
    ([True], "ungraded", "passed an array is not a boolean; the run is ungraded"),
]


def _line(i: int, value: Any, inside: bool) -> dict[str, Any]:
    line: dict[str, Any] = {"run_id": f"r{i}-{'out' if inside else 'env'}", "agent": "a",
                            "started_at": "2026-11-20T10:00:00Z",
                            "response": {"final_response": "ok"}}
    if inside:
        line["outcome"] = {"passed": value}
    else:
        line["passed"] = value
    return line


@pytest.mark.parametrize("inside", [False, True], ids=["envelope", "outcome"])
def test_passed_values_are_read_or_flagged(write_lines: Callable[..., Path],
                                           views: MemoryViews,
                                           inside: bool) -> None:
    path = write_lines([_line(i, v, inside) for i, (v, _, _) in enumerate(CASES)])
    views.load(path)
    got = dict(views("select run_id, status from runs"))
    flags = dict(views("select run_id, detail from flags where code = 'envelope_malformed'"))
    key = "outcome.passed" if inside else "passed"
    for i, (_, status, detail) in enumerate(CASES):
        rid = f"r{i}-{'out' if inside else 'env'}"
        assert got[rid] == status, (rid, got[rid])
        want = None if detail is None else detail.replace("passed ", f"{key} ", 1)
        assert flags.get(rid) == want, (rid, flags.get(rid))
    # A harness that writes strings keeps its failures in the pass rate.
    n_graded, n_passed = views("select sum(n_graded), sum(n_passed) from v_pass_rates")[0]
    assert (n_graded, n_passed) == (10, 4)

    res = CliRunner().invoke(app, ["validate", str(path)])
    assert res.exit_code == 1
    for i, (_, _, detail) in enumerate(CASES):
        said = f"{path.name}:{i + 1}\n"
        assert (said in res.output) == (detail is not None), (said, res.output)
    assert "the run is ungraded" in res.output and "read as false" in res.output
