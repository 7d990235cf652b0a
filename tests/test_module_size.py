"""No module of runlake is too long to read as one thing: every `.py` under transforms/,
pipelines/, bench/, devtools/, data_samples/ and tests/ holds at most MAX_LINES lines. A module
that grows past it is split by what its code does."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("transforms", "pipelines", "bench", "devtools", "data_samples", "tests")
MAX_LINES = 400


def too_long(root: Path = REPO) -> list[str]:
    """Each module over MAX_LINES lines, as `path: lines`."""
    out = []
    for folder in ROOTS:
        for path in sorted((root / folder).rglob("*.py")):
            n = len(path.read_text(encoding="utf-8").splitlines())
            if n > MAX_LINES:
                out.append(f"{path.relative_to(root)}: {n}")
    return out


def test_no_module_is_over_the_limit() -> None:
    assert too_long() == []


def test_a_long_module_is_named(tmp_path: Path) -> None:
    (tmp_path / "transforms").mkdir()
    (tmp_path / "transforms" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "transforms" / "short.py").write_text("x = 1\n" * MAX_LINES)
    assert too_long(tmp_path) == [f"transforms/long.py: {MAX_LINES + 1}"]
