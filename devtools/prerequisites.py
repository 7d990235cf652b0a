"""What the test suite needs beyond Python, said in one line each before `make test` runs
pytest: a Java runtime for the Spark tests, Chromium for the report's browser test. Without
them those tests are skipped (with the same reason), unless RUNLAKE_REQUIRE_SPARK or
RUNLAKE_REQUIRE_CHROMIUM is set (as .ci/run does), when they fail instead."""

import os
import re
import shutil
import subprocess
import sys

JAVA_MIN = 17
"""The oldest Java that pyspark 4 runs on."""

JAVA_HINT = "Debian: apt-get install openjdk-17-jre-headless"
CHROMIUM_HINT = "Debian: apt-get install chromium"


def java_problem() -> str | None:
    """Why the Spark tests cannot run here (no java on PATH, or one older than JAVA_MIN), or
    None when they can."""
    java = shutil.which("java")
    if java is None:
        return "no java on PATH"
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"`{java} -version` failed ({e})"
    found = re.search(r'version "(\d+)(?:\.(\d+))?', done.stderr + done.stdout)
    if found is None:
        return f"`{java} -version` names no version"
    major = int(found[1])
    if major == 1 and found[2]:  # "1.8.0_402" is Java 8
        major = int(found[2])
    return f"{java} is Java {major}" if major < JAVA_MIN else None


def chromium() -> str | None:
    """Debian's chromium, or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def spark_skip_reason() -> str | None:
    """The reason the Spark tests are skipped, or None when they run (Java found, or
    RUNLAKE_REQUIRE_SPARK set: then they fail without it)."""
    if os.environ.get("RUNLAKE_REQUIRE_SPARK"):
        return None
    problem = java_problem()
    if problem is None:
        return None
    return f"Java {JAVA_MIN} or newer is needed ({problem}; {JAVA_HINT})"


def lines() -> list[str]:
    """What `make test` says before pytest starts: one line per missing prerequisite."""
    said = []
    problem = java_problem()
    if problem is not None:
        then = ("fail (RUNLAKE_REQUIRE_SPARK is set)" if os.environ.get("RUNLAKE_REQUIRE_SPARK")
                else "are skipped")
        said.append(f"make test: {problem}: the Spark tests (tests/sql/test_spark.py) need Java "
                    f"{JAVA_MIN} or newer and {then} ({JAVA_HINT})")
    if chromium() is None:
        then = ("fails (RUNLAKE_REQUIRE_CHROMIUM is set)"
                if os.environ.get("RUNLAKE_REQUIRE_CHROMIUM") else "is skipped")
        said.append("make test: no chromium on PATH: the report's browser test "
                    f"(tests/test_report.py) {then} ({CHROMIUM_HINT})")
    return said


def main() -> None:
    for line in lines():
        print(line, file=sys.stderr)


if __name__ == "__main__":
    main()
