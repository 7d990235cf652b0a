"""The docs: the data dictionary and flag table are the ones the code declares, every link
lands on a page and section that exist, and the README's five-minute tour runs as written."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from devtools.docs import BEGIN, DICTIONARY, END, block
from tests.conftest import REPO
from transforms import warehouse
from transforms.contracts.flags import CATALOG
from transforms.contracts.schemas import TABLES
from transforms.warehouse.checks import CHECKS

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def test_dictionary_is_current() -> None:
    """Regenerate with `python -m devtools.docs --write` when a schema or flag changes."""
    text = DICTIONARY.read_text()
    assert BEGIN in text and END in text
    start = text.index(BEGIN)
    assert text[start:text.index(END) + len(END)] == block()


def test_one_flag_catalog(tmp_path: Path) -> None:
    """The catalog, the data dictionary's table of codes and the warehouse's flag_codes table
    agree, code by code, with severity and category."""
    text = DICTIONARY.read_text()
    table = text[text.index("### Flag codes"):]
    documented = {m[1]: (m[2], m[3]) for m in re.finditer(
        r"^\| `([a-z_]+)` \| (info|warning|error) \| ([a-z]+) \|", table, re.M)}
    catalog = {c: (s.severity, s.category) for c, s in CATALOG.items()}
    assert documented == catalog
    warehouse.build(tmp_path)
    con = warehouse.connect(tmp_path)
    try:
        stored = {r[0]: (r[1], r[2]) for r in con.execute(
            "SELECT code, severity, category FROM flag_codes").fetchall()}
    finally:
        con.close()
    assert stored == catalog


def test_data_checks_documented() -> None:
    """docs/dagster.md names the data checks the pipeline runs (transforms.warehouse.checks),
    no other, each on its table, the blocking ones as such."""
    text = (REPO / "docs" / "dagster.md").read_text()
    part = text[text.index("- **Checks**"):text.index("On `nightly_report`")]
    named = set(re.findall(r"`([a-z_]+)`", part)) - set(TABLES) - {"warehouse_views"}
    assert named == {c.name for c in CHECKS}
    for c in CHECKS:
        after = part[part.index(f"`{c.name}`"):]
        assert f" on `{c.table}`" in after[:after.index(" on `") + len(c.table) + 6]
        assert after.startswith(f"`{c.name}` on `{c.table}` (ERROR, blocking") == c.blocking


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to -."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    return {slug(m[1]) for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)}


def _target(page: Path, link: str) -> tuple[Path, str | None]:
    path, _, anchor = link.partition("#")
    return ((page.parent / path).resolve() if path else page), anchor or None


def test_every_link_lands_on_a_page_and_section_that_exist() -> None:
    broken = []
    for page in PAGES:
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
        for link in LINK.findall(text) + re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", link):
                continue  # https://, mailto:
            target, anchor = _target(page, link)
            if not target.exists():
                broken.append(f"{page.name}: {link} (no such file)")
            elif anchor and target.suffix == ".md" and anchor not in anchors(target):
                broken.append(f"{page.name}: {link} (no such section)")
    assert not broken, broken


def test_flag_sources_cite_a_section_of_the_docs() -> None:
    for spec in CATALOG.values():
        assert spec.source.startswith("docs/"), spec.code
        target, anchor = _target(REPO / "README.md", spec.source)
        assert target.exists() and anchor in anchors(target), (spec.code, spec.source)


def test_nothing_outside_the_repository_is_named() -> None:
    """The README, the docs and the product cite runlake's own documents only."""
    outside = re.compile(r"\.\./shared|seeds/|spec/(formats|warehouse)|FIELD-NOTES")
    files = [*PAGES, *(REPO / "transforms").rglob("*.py"), *(REPO / "sql").rglob("*.sql")]
    named = [f"{f.relative_to(REPO)}: {m[0]}" for f in files
             for m in outside.finditer(f.read_text())]
    assert not named, named


@pytest.mark.slow  # the README's commands, each in a process of its own
def test_the_readme_tour_runs_as_written(tmp_path: Path) -> None:
    """The shell blocks between <!-- tour --> markers, run in order in a folder holding the
    repository's .venv and samples, each command succeeding, with the answers the prose
    promises."""
    text = (REPO / "README.md").read_text()
    blocks = re.findall(r"<!-- tour -->\n```sh\n(.*?)```\n<!-- /tour -->", text, re.S)
    assert len(blocks) >= 3
    (tmp_path / ".venv").symlink_to(REPO / ".venv")
    shutil.copytree(REPO / "data_samples", tmp_path / "data_samples")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUNLAKE_")}
    done = subprocess.run(["bash", "-c", "set -euo pipefail\n" + "\n".join(blocks)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "77 files (0 unchanged)" in out
    assert "REGRESSION triage-agent / gpt-4.1: pass rate 96% -> 36%" in out
    assert "REGRESSION travel-agent / gpt-4o: pass rate 76% -> 25%" in out
    assert "CRASHED triage-agent / gpt-4.1: 1 run (TimeoutError" in out
    assert "MISSING support-bot / gpt-4.1" in out
    assert "REGRESSED (pass rate) triage-agent: 96% -> 36% passed (69/72 against " \
           "4/11); on the same 11 test cases drop p = 5.6e-08" in out
    assert "REGRESSED (pass rate) travel-agent: 76% -> 25% passed (54/71 against 3/12); on " \
           "the same 12 test cases drop p = 0.00026" in out
    assert (tmp_path / "my-warehouse" / "reports" / "nightly-2026-11-20.html").is_file()
    for header in ("pass_rate", "last_night", "cost_usd", "seconds", "findings"):
        assert header in out, header
