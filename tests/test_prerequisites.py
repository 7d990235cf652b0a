"""`make test` says what it lacks (Java for the Spark tests, Chromium for the report's browser
test) in one line each before pytest starts, and the Spark tests are then skipped with that
reason rather than failing, unless RUNLAKE_REQUIRE_SPARK asks for them."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _said(path: str, **env: str) -> list[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("RUNLAKE_REQUIRE")}
    done = subprocess.run([sys.executable, "-m", "devtools.prerequisites"], cwd=ROOT,
                          capture_output=True, text=True, env={**base, "PATH": path, **env},
                          timeout=120, check=True)
    assert done.stdout == ""
    return done.stderr.splitlines()


def _fake(folder: Path, name: str, script: str) -> None:
    (folder / name).write_text(f"#!/bin/sh\n{script}\n")
    (folder / name).chmod(0o755)


def test_no_java_is_one_line_naming_the_spark_tests(tmp_path: Path) -> None:
    _fake(tmp_path, "chromium", "exit 0")
    said = _said(str(tmp_path))
    assert said == ["make test: no java on PATH: the Spark tests (tests/sql/test_spark.py) need "
                    "Java 17 or newer and are skipped (Debian: apt-get install "
                    "openjdk-17-jre-headless)"]
    required = _said(str(tmp_path), RUNLAKE_REQUIRE_SPARK="1")
    assert len(required) == 1 and "fail (RUNLAKE_REQUIRE_SPARK is set)" in required[0]


@pytest.mark.parametrize(("printed", "major"), [('openjdk version "11.0.22" 2024-01-16', 11),
                                                 ('java version "1.8.0_402"', 8)])
def test_an_old_java_is_named_with_its_version(tmp_path: Path, printed: str, major: int) -> None:
    _fake(tmp_path, "java", f"echo '{printed}' >&2")
    _fake(tmp_path, "chromium", "exit 0")
    [line] = _said(str(tmp_path))
    assert f"{tmp_path / 'java'} is Java {major}: the Spark tests" in line


def test_java_17_and_chromium_say_nothing(tmp_path: Path) -> None:
    _fake(tmp_path, "java", "echo 'openjdk version \"17.0.13\" 2024-10-15' >&2")
    _fake(tmp_path, "chromium", "exit 0")
    assert _said(str(tmp_path)) == []


def test_no_chromium_is_its_own_line(tmp_path: Path) -> None:
    _fake(tmp_path, "java", "echo 'openjdk version \"21.0.5\" 2024-10-15' >&2")
    assert _said(str(tmp_path)) == ["make test: no chromium on PATH: the report's browser test "
                                    "(tests/test_report.py) is skipped (Debian: apt-get install "
                                    "chromium)"]


def test_make_test_says_it_before_pytest_starts() -> None:
    """`make -n test` lists the recipe: the prerequisites line comes before pytest."""
    done = subprocess.run(["make", "-n", "-W", "pyproject.toml", "test"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=True)
    recipe = done.stdout
    assert "-m devtools.prerequisites" in recipe and "pytest" in recipe
    assert recipe.index("-m devtools.prerequisites") < recipe.index("pytest -n")


def test_make_run_installs_no_dependency_group() -> None:
    """`make run` syncs the runtime dependencies only; `make test` every group."""
    run = subprocess.run(["make", "-n", "-W", "uv.lock", "run"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60, check=True).stdout
    [sync] = [line for line in run.splitlines() if " sync " in line]
    assert "--no-default-groups" in sync and "--group" not in sync and "--all-groups" not in sync
    test = subprocess.run(["make", "-n", "-W", "uv.lock", "test"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=True).stdout
    assert any(" sync " in line and "--all-groups" in line for line in test.splitlines())
