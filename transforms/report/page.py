"""The page: the report's rows and charts rendered by `templates/report/nightly.html`.

The templates are Jinja2 with autoescaping on for every template, and every `{{ … }}` first
goes through `plain` (transforms.verdict.formatting: None as nothing, bidi controls shown as
U+XXXX): text from a trace is written as text wherever it lands, in HTML, in an attribute or
in an SVG label, without a hand-called escape. Nothing here marks a string safe; only the
templates' own macros (whose values are escaped inside them) are inserted as markup.
"""

import hashlib
import os
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from transforms.errors import InputError
from transforms.report import charts, queries
from transforms.report.queries import MAX_CRASHES, MAX_FLIPS, SURPRISE_LEVEL, ReportData
from transforms.report.summary import ReportSummary
from transforms.verdict.formatting import (
    first_line,
    p_value,
    pct,
    plain,
    score_mean,
    usd_change,
)
from transforms.verdict.verdict_row import REASON_WORDS, significance_level

MAX_MESSAGE_CHARS = 4_000
"""A transcript message is cut after this many characters (the rest is counted)."""

TEMPLATE = "report/nightly.html"


@cache
def environment() -> jinja2.Environment:
    """The templates under transforms/templates/, autoescaped whatever their name."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("transforms", "templates"),
        autoescape=True, finalize=plain, undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True)
    env.filters.update(pct=pct, p=p_value, usd_change=usd_change, fmt=format)
    env.filters.update(first_line=first_line, mean=score_mean)
    env.globals.update(reason_words=REASON_WORDS, max_flips=MAX_FLIPS,
                       max_crashes=MAX_CRASHES, surprise_level=SURPRISE_LEVEL,
                       max_message_chars=MAX_MESSAGE_CHARS,
                       significance_level=significance_level(),
                       shown_beside=queries.shown_beside, run_anchor=run_anchor)
    return env


def run_anchor(run_id: str) -> str:
    """The id of a run's transcript on the page: `run-` and a digest of the run id, so that
    any run id (spaces, quotes, markup) makes a valid, unique fragment."""
    return "run-" + hashlib.blake2b(str(run_id).encode(), digest_size=8).hexdigest()



@dataclass
class PassRateCard:
    agent: str
    model: str
    flagged: bool
    chart: charts.PassRateChart


WORSE_MIN_FINDINGS = 3
"""A flag code is worse on the latest day only from this many findings on it, and only when
they are more than WORSE_FACTOR times the baseline's daily mean."""
WORSE_FACTOR = 2


@dataclass
class FlagRow:
    code: str
    severity: str
    per_day: float
    latest: int
    new: bool
    """Findings on the latest day and none in the baseline."""
    worse: bool
    """At least 3 on the latest day and more than twice the baseline's daily mean
    (WORSE_MIN_FINDINGS, WORSE_FACTOR)."""


def pass_rate_cards(data: ReportData) -> list[PassRateCard]:
    """One chart per agent × model with a graded run in the window, in the verdict's order;
    a pair whose pass rate fell significantly is flagged."""
    v = data.verdict
    flagged = {(r.agent, r.model) for r in v.by_reason("pass_rate")}
    by_pair: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in data.rates:
        by_pair.setdefault((r["agent"], r["model"]), []).append(r)
    out = []
    for p in ((r.agent, r.model) for r in v.pairs):
        series = by_pair.get(p, [])
        if any(r["pass_rate"] is not None for r in series):
            out.append(PassRateCard(p[0], p[1], p in flagged,
                                    charts.pass_rate_chart(series, data.days, p in flagged)))
    return out


def flag_rows(rows: list[dict[str, Any]], n_baseline_days: int) -> list[FlagRow]:
    out = []
    for r in rows:
        per_day = (r["baseline"] or 0) / max(1, n_baseline_days)
        latest = r["latest"] or 0
        out.append(FlagRow(r["code"], r["severity"], per_day, latest,
                           new=bool(latest and not r["baseline"]),
                           worse=latest > WORSE_FACTOR * per_day
                           and latest >= WORSE_MIN_FINDINGS))
    return out


def summarize(data: ReportData, path: Path) -> ReportSummary:
    return ReportSummary(path=path, verdict=data.verdict, n_runs_latest=data.n_runs_latest,
                         n_flips=sum(c["direction"] is not None for c in data.changed),
                         n_pass_to_fail=data.n_pass_to_fail, n_surprising=data.n_surprising,
                         future_runs=[(r["day"], int(r["n_runs"])) for r in data.future_runs])


def render(data: ReportData, now: datetime | None = None) -> str:
    """The page's HTML."""
    return environment().get_template(TEMPLATE).render(
        latest=data.latest, start=data.start, end=data.end, verdict=data.verdict,
        n_runs_latest=data.n_runs_latest,
        n_pass_to_fail=data.n_pass_to_fail, n_surprising=data.n_surprising,
        changed=data.changed, runs=data.runs, pass_hat_k=data.pass_hat_k,
        pass_rate_charts=pass_rate_cards(data),
        tokens=charts.trend_chart(charts.series(data.tokens), data.days, ""),
        cost=charts.trend_chart(charts.series(data.cost), data.days, ""),
        runtime=charts.trend_chart(charts.series(data.runtime), data.days, " ms"),
        shares=charts.share_bars(data.shares),
        flags=flag_rows(data.flags, data.baseline_days),
        generated=(now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC"),
        warehouse_name=data.warehouse_name) + "\n"


def write_report(home: Path | str, day: date | None = None, baseline_days: int = 7,
                 now: datetime | None = None, out: Path | None = None) -> ReportSummary:
    """Write the page to `out`, else home/reports/nightly-<day>.html (beside the warehouse file
    for an s3:// home; atomically), and return what it says. A home that cannot be written (a
    read-only mount) does not stop the report: the page goes to runlake's cache folder instead,
    and the summary's note says so (an `out` that cannot be written is an InputError)."""
    from transforms import warehouse

    data = queries.read(home, day, baseline_days)
    name = f"nightly-{data.latest.isoformat()}.html"
    summary = summarize(data, out if out is not None else warehouse.reports(home) / name)
    page = render(data, now)
    try:
        write_page(summary.path, page)
    except OSError as e:
        if out is not None:
            raise InputError(f"{out}: the report cannot be written there "
                             f"({e.strerror or e})") from None
        aside = _cache_reports(home) / name
        write_page(aside, page)
        summary.note = (f"{summary.path.parent} cannot be written ({e.strerror or e}): the "
                        "page is in runlake's cache folder instead (choose with --out)")
        summary.path = aside
    return summary


def _cache_reports(home: Path | str) -> Path:
    """The folder of a home's reports in runlake's cache folder (for a home that cannot be
    written): reports/<the home, named as cache_folder names it>."""
    from transforms.objectstore import cache_folder
    from transforms.settings import load

    where = home if isinstance(home, str) else str(Path(home).resolve())
    named = cache_folder(where, load().xdg_cache_home)
    return named.parent / "reports" / named.name


def write_page(path: Path, page: str) -> None:
    """Write a page atomically: a reader (a browser, a CI step) sees the old page or the new
    one, never half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    tmp.write_text(page, encoding="utf-8")
    os.replace(tmp, path)

