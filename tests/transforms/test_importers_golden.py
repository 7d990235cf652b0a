"""Golden outputs of `runlake import`, one format at a time.

Each format has a folder `tests/fixtures/importers/<format>/`: `input/` holds small sources
constructed for these tests (see the README there), `args.json` (optional) the `--agent` and
`--model` the import is given, and `expected/` what the import writes: the landing files, and
`summary.json` with each source's counts and notes as `runlake import` prints them. The test
converts every input and compares each file with its expected twin.

After a deliberate, reviewed change to an importer, rewrite the expected files with

    .venv/bin/python -m tests.transforms.test_importers_golden --write

and review the diff of `tests/fixtures/importers/*/expected/` before committing it.
"""

import json
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import REPO
from transforms.importers.known import IMPORTERS, run_import

FIXTURES = REPO / "tests" / "fixtures" / "importers"


def convert(fmt: str, out: Path) -> dict[str, str]:
    """The files importing the format's inputs writes, by name, and its summary.json."""
    folder = FIXTURES / fmt
    args = folder / "args.json"
    options = json.loads(args.read_text()) if args.exists() else {}
    results = run_import(fmt, sorted((folder / "input").iterdir()), out, **options)
    written = {r.output.name: r.output.read_text(encoding="utf-8") for r in results}
    summary = [{"source": r.source.name, "output": r.output.name, "runs": r.runs,
                "passed": r.passed, "graded": r.graded, "notes": r.notes} for r in results]
    written["summary.json"] = json.dumps(summary, indent=1, ensure_ascii=False) + "\n"
    return written


@pytest.mark.parametrize("fmt", sorted(IMPORTERS))
def test_import_gives_the_golden_output(fmt: str, tmp_path: Path) -> None:
    expected_dir = FIXTURES / fmt / "expected"
    assert expected_dir.is_dir(), f"no golden fixture for {fmt}: add {FIXTURES / fmt}/input/"
    got = convert(fmt, tmp_path)
    expected = {p.name: p.read_text(encoding="utf-8") for p in expected_dir.iterdir()}
    assert sorted(got) == sorted(expected)
    for name, text in expected.items():
        assert got[name].splitlines() == text.splitlines(), f"{fmt}/expected/{name}"


def write() -> None:
    for fmt in sorted(IMPORTERS):
        expected_dir = FIXTURES / fmt / "expected"
        with tempfile.TemporaryDirectory() as tmp:
            written = convert(fmt, Path(tmp))
        shutil.rmtree(expected_dir, ignore_errors=True)
        expected_dir.mkdir()
        for name, text in written.items():
            (expected_dir / name).write_text(text, encoding="utf-8")
        print(f"{fmt}: {', '.join(sorted(written))}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m tests.transforms.test_importers_golden --write")
    write()
