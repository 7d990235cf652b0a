"""End to end: `python -m pipelines.materialize` (`make run`) materializes a landing day and
says how its checks went; `dagster dev -w workspace.yaml` on 127.0.0.1 with a temporary
DAGSTER_HOME (the helpers here) serves the partitioned assets and their latest
materializations over GraphQL: tests/pipelines/test_run_queue.py starts it, once for the run
queue and what it serves."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest

# Slow: `dagster dev` in its own processes (`make test-fast` leaves it out).
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
DAY = "2026-11-20"
DAGSTER = Path(sys.executable).with_name("dagster")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def graphql_query(port: int, query: str) -> dict[str, Any]:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql", data=json.dumps({"query": query}).encode(),
        headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        body: dict[str, Any] = json.load(resp)
    return body


def _wait_loaded(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 180
    query = "{ workspaceOrError { ... on Workspace { locationEntries { loadStatus } } } }"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"dagster dev exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            entries = graphql_query(port, query)["data"]["workspaceOrError"]["locationEntries"]
            if entries and all(e["loadStatus"] == "LOADED" for e in entries):
                return
        except (urllib.error.URLError, ConnectionError, KeyError, TypeError, TimeoutError):
            pass
        time.sleep(1)
    pytest.fail(f"dagster dev not ready in 180 s:\n{log.read_text()[-3000:]}")


@contextmanager
def dagster_dev(env: dict[str, str], log: Path) -> Iterator[int]:
    """`dagster dev -w workspace.yaml` on a free port of 127.0.0.1, loaded; yields the port and
    stops the server and its daemon afterwards."""
    port = _free_port()
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(DAGSTER), "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
            cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_loaded(port, proc, log)
        yield port
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_materialize_runs_the_landing_days(tmp_path: Path) -> None:
    """`make run`'s step: each landing day materialized in process, its checks printed."""
    dagster_home = tmp_path / "dagster_home"
    dagster_home.mkdir()
    shutil.copy(REPO / "pipelines" / "dagster.yaml", dagster_home / "dagster.yaml")
    landing = tmp_path / "landing"
    shutil.copytree(REPO / "data_samples" / DAY, landing / DAY)
    env = {**os.environ, "DAGSTER_HOME": str(dagster_home), "RUNLAKE_HOME": str(tmp_path / "home"),
           "RUNLAKE_LANDING": str(landing)}
    done = subprocess.run([sys.executable, "-m", "pipelines.materialize"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"{DAY}: materialized" in done.stdout
    # Freshness warns (the sample day is in the past), and the day's crash (triage-agent's run
    # made from its trace) fails no_regression, each failing check saying why; nothing else.
    failing = [ln.strip() for ln in done.stdout.splitlines() if ln.startswith("  ")]
    assert len(failing) == 2, failing
    assert failing[0].startswith("warn: latest_day_is_fresh: newest day "), failing
    assert failing[1] == "warn: no_regression: nothing regressed; 0 pass-rate drops with " \
        "q < 0.05; 1 crashed run", failing


def _tree(pid: int) -> set[int]:
    """The process and its descendants still alive (from /proc)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    alive, todo = set(), [pid]
    while todo:
        p = todo.pop()
        if Path(f"/proc/{p}").exists():
            alive.add(p)
            todo.extend(children.get(p, []))
    return alive


@pytest.mark.skipif(not Path("/proc").is_dir() or shutil.which("make") is None,
                    reason="needs /proc and make")
def test_make_dev_started_in_the_background_stops_on_sigterm(tmp_path: Path) -> None:
    """`make dev &` from a script (its processes inherit SIGINT ignored, which dagster dev
    would also apply to SIGTERM): SIGTERM to make stops make, dagster dev, its webserver and
    its daemon within seconds."""
    venv = Path(sys.prefix)
    if not (venv / ".runtime").exists():
        pytest.skip("the environment was not installed by make")
    dagster_home = tmp_path / "dagster_home"
    port = _free_port()
    env = {**os.environ, "DAGSTER_HOME": str(dagster_home), "RUNLAKE_HOME": str(tmp_path / "home"),
           "RUNLAKE_LANDING": str(tmp_path / "landing")}
    log = tmp_path / "dev.log"
    # -o: the environment is taken as it is, never installed again by this test.
    script = (f"make -s -o {venv}/.runtime VENV={venv} DEV_PORT={port} dev >{log} 2>&1 & "
              "echo $!; wait")
    shell = subprocess.Popen(["sh", "-c", script], cwd=REPO, env=env, stdout=subprocess.PIPE,
                             text=True, start_new_session=True)
    try:
        assert shell.stdout is not None
        make = int(shell.stdout.readline())
        _wait_loaded(port, shell, log)
        tree = _tree(make)
        assert len(tree) >= 4, tree  # make, dagster dev, its webserver and daemon (and more)
        os.kill(make, signal.SIGTERM)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists()
                                                  and _tree(p) for p in tree):
            time.sleep(0.5)
        assert not [p for p in tree if _tree(p)], log.read_text()[-3000:]
        shell.wait(10)
    finally:
        with suppress(ProcessLookupError):
            os.killpg(shell.pid, signal.SIGKILL)
