"""The screenshots of the docs, from the code: docs/nightly-report.png (the README's and
docs/report.md's), the newest nightly report under RUNLAKE_HOME, and docs/dagster-*.png
(docs/dagster.md's), from a running UI.

    make clean && make run && make dev            # in one terminal
    .venv/bin/python -m devtools.screenshots      # in another, once the UI is up
    .venv/bin/python -m devtools.screenshots --report-only   # the report page alone

Drives headless Chromium (Debian's `chromium`) over the DevTools protocol, so that a shot can
click a button first (the Plots toggle of the Metadata section). Each page is given time to
load its data before the shot.
"""

import argparse
import base64
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from websockets.sync.client import connect

DOCS = Path(__file__).resolve().parents[1] / "docs"
WIDTH = 1400
REPORT_SHOT = ("nightly-report.png", 1200, 1500)
"""The report page's shot: its top (the headline, what regressed, the crashed runs)."""

# (file, path in the UI, height, text of a button to click first or None, what it shows)
SHOTS = [
    ("dagster-asset-graph.png", "/locations/pipelines.definitions/asset-groups/lake", 1500, None,
     "the lake group: each table's partitions are the landing days"),
    ("dagster-partitions.png", "/assets/runs?view=partitions", 760, None,
     "runs, Partitions tab: one partition per landing day"),
    ("dagster-runs.png", "/runs", 900, None,
     "the runs list: the regressed day's run failed"),
    ("dagster-no-regression.png", "/assets/nightly_report?view=checks", 900, None,
     "nightly_report, Checks tab: no_regression failed at ERROR and what regressed"),
    ("dagster-metadata-plots.png", "/assets/runs", 2000, "Plots",
     "runs, Overview tab, Metadata section, Plots: one plot per number, by partition"),
    ("dagster-runs-metadata.png", "/assets/runs?view=events", 2250, None,
     "runs, Events tab: the latest day's pass rate per agent and model and failed runs"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Page:
    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.next_id = 0

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                result: dict[str, Any] = msg.get("result", {})
                return result

    def scroll_to(self, text: str) -> None:
        """Scroll the button with this text to the top, with a little room above it."""
        self.call("Runtime.evaluate", expression=f"""(() => {{
            const b = [...document.querySelectorAll('button')]
                .find(e => e.textContent.trim() === {json.dumps(text)});
            if (b) {{ b.scrollIntoView({{block: 'start'}}); }}
        }})()""")

    def click(self, text: str) -> bool:
        found = self.call("Runtime.evaluate", returnByValue=True, expression=f"""(() => {{
            const b = [...document.querySelectorAll('button')]
                .find(e => e.textContent.trim() === {json.dumps(text)});
            if (!b) return false;
            b.scrollIntoView({{block: 'center'}});
            b.click();
            return true;
        }})()""")
        return bool(found.get("result", {}).get("value"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default="http://127.0.0.1:3000")
    ap.add_argument("--wait", type=float, default=8.0, help="seconds a page gets to load")
    ap.add_argument("--report", type=Path, default=None,
                    help="the report page to shoot (default: the newest nightly-*.html of "
                         "RUNLAKE_HOME, as `make run` writes it)")
    ap.add_argument("--report-only", action="store_true", help="shoot the report page only")
    args = ap.parse_args()
    report = args.report or newest_report()
    if report is None or not report.is_file():
        print("no nightly report to shoot: run `make run` (or pass --report FILE)",
              file=sys.stderr)
        return 2
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    port = _free_port()
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.Popen(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             f"--remote-debugging-port={port}", f"--user-data-dir={profile}",
             f"--window-size={WIDTH},1000", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list") as r:
                        targets = [t for t in json.load(r) if t["type"] == "page"]
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.5)
            with connect(targets[0]["webSocketDebuggerUrl"], max_size=64 * 2**20) as ws:
                page = Page(ws)
                _shoot_report(page, report)
                return 0 if args.report_only else _shoot(page, args.url, args.wait)
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def newest_report() -> Path | None:
    from transforms import warehouse
    from transforms.settings import Settings

    reports = sorted(warehouse.reports(Settings().home).glob("nightly-*.html"))
    return reports[-1] if reports else None


def _shoot_report(page: Page, report: Path) -> None:
    name, width, height = REPORT_SHOT
    page.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
              deviceScaleFactor=1, mobile=False)
    page.call("Page.navigate", url=report.resolve().as_uri())
    time.sleep(2)  # one self-contained file: nothing to wait for but the layout
    shot = page.call("Page.captureScreenshot", format="png")
    (DOCS / name).write_bytes(base64.b64decode(shot["data"]))
    print(f"docs/{name}: {report.name}, its top")


def _shoot(page: Page, url: str, wait: float) -> int:
    for name, path, height, button, what in SHOTS:
        page.call("Emulation.setDeviceMetricsOverride", width=WIDTH, height=height,
                  deviceScaleFactor=1, mobile=False)
        page.call("Page.navigate", url=url + path)
        time.sleep(wait)
        if button is not None:
            if not page.click(button):
                print(f"{name}: no {button!r} button on {path}", file=sys.stderr)
                return 1
            time.sleep(wait / 2)
            page.scroll_to(button)
            time.sleep(1)
        shot = page.call("Page.captureScreenshot", format="png")
        (DOCS / name).write_bytes(base64.b64decode(shot["data"]))
        print(f"docs/{name}: {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
