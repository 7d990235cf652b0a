"""The nightly report: one self-contained HTML page of what got worse on a day and why.

`write_report(home, day, baseline_days)` reads the warehouse (read-only) and writes
`home/reports/nightly-<day>.html`: significant regressions first, then flipped test cases with
their transcripts, pass rate per agent and model with its Wilson band, token and runtime
trends, tool share changes and flags by code. Charts are inline SVG; the page has no script and
loads nothing from the network. Every string that came from a trace goes through `esc`.
"""

import html
import math
import os
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import duckdb

from transforms import nightly, warehouse
from transforms.errors import InputError
from transforms.nightly import PairChange, Verdict

MAX_FLIPS = 30
MAX_MESSAGE_CHARS = 4_000
PALETTE = ["#2563eb", "#d97706", "#059669", "#7c3aed", "#db2777", "#0891b2", "#65a30d",
           "#dc2626", "#4b5563", "#9333ea"]


_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


def esc(value: Any) -> str:
    """Text for HTML and SVG, quotes included: nothing a trace holds can become markup, and
    no bidi control from a trace can reorder the text around it (shown as U+XXXX)."""
    text = _BIDI.sub(lambda m: f"U+{ord(m[0]):04X}", "" if value is None else str(value))
    return html.escape(text, quote=True)


@dataclass
class ReportSummary:
    """What the page says, for callers that print or publish it (CLI, Dagster metadata)."""

    path: Path
    verdict: Verdict
    n_runs_latest: int
    n_flips: int = 0
    n_pass_to_fail: int = 0
    n_flaky: int = 0

    @property
    def latest_day(self) -> date:
        return self.verdict.latest_day

    @property
    def baseline_start(self) -> date:
        return self.verdict.baseline_start

    @property
    def baseline_end(self) -> date:
        return self.verdict.baseline_end

    def markdown(self) -> str:
        v = self.verdict
        lines = [f"**{v.latest_day}** against {v.baseline_start} to {v.baseline_end}, "
                 f"{self.n_runs_latest} runs: {_md(v.headline(), 2000)} "
                 f"{self.n_pass_to_fail} test cases pass → fail ({self.n_flaky} flaky cases "
                 "apart)."]
        if v.regressed:
            lines += ["", "| agent | model | why | runs | error rate | pass rate | p-value |",
                      "|---|---|---|---:|---:|---:|---:|"]
            for r in v.regressed:
                row = r.row
                lines.append(
                    f"| {_md(r.agent)} | {_md(r.model)} | "
                    f"{', '.join(nightly.REASON_WORDS[x] for x in r.reasons)} | "
                    f"{row['runs_baseline']} → {row['runs_latest']} | "
                    f"{_pct(row['error_rate_baseline'])} → {_pct(row['error_rate_latest'])} | "
                    f"{_pct(row['baseline_pass_rate'])} → {_pct(row['latest_pass_rate'])} | "
                    f"{_p(row['p_value'])} |")
        if v.missing_cases:
            lines += ["", "Missing test cases: " + "; ".join(
                f"{_md(a)} / {_md(m)}: " + ", ".join(_md(c["test_case_id"]) for c in cs[:20])
                + (f" and {len(cs) - 20} more" if len(cs) > 20 else "")
                for (a, m), cs in v.missing_by_pair().items())]
        return "\n".join(lines)


def _md(value: Any, most: int = 80) -> str:
    text = "" if value is None else str(value)
    for ch in "\\|`*_[]<>#":
        text = text.replace(ch, "\\" + ch)
    return text.replace("\n", " ")[:most]


def _pct(v: float | None, signed: bool = False) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{v * 100:+.0f}%" if signed else f"{v * 100:.0f}%"


def _p(v: float | None) -> str:
    if v is None:
        return "–"
    if v < 0.0001:
        return f"{v:.1e}"
    return f"{v:.4f}" if v < 0.01 else f"{v:.3f}"


_rows = nightly.rows


# -- charts ---------------------------------------------------------------------------------

def _pass_rate_chart(series: list[dict[str, Any]], days: list[date], flagged: bool) -> str:
    """Pass rate by day with the Wilson 95% band; the latest point red when it regressed."""
    w, h, left, top, bottom = 300, 120, 34, 8, 20
    pw, ph = w - left - 8, h - top - bottom
    by_day = {r["day"]: r for r in series}

    def x(i: int) -> float:
        return left + (pw * i / max(1, len(days) - 1))

    def y(v: float) -> float:
        return top + ph * (1 - v)

    parts = [f'<svg viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img">']
    for v in (0, 0.5, 1):
        parts.append(f'<line x1="{left}" x2="{w - 8}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                     f'class="grid"/><text x="{left - 4}" y="{y(v) + 3:.1f}" '
                     f'class="axis" text-anchor="end">{v * 100:.0f}%</text>')
    pts = [(i, by_day[d]) for i, d in enumerate(days)
           if d in by_day and by_day[d]["pass_rate"] is not None]
    if pts:
        upper = " ".join(f"{x(i):.1f},{y(r['pass_rate_high']):.1f}" for i, r in pts)
        lower = " ".join(f"{x(i):.1f},{y(r['pass_rate_low']):.1f}" for i, r in reversed(pts))
        parts.append(f'<polygon points="{upper} {lower}" class="band"/>')
        parts.append('<polyline points="' + " ".join(f"{x(i):.1f},{y(r['pass_rate']):.1f}"
                                                      for i, r in pts) + '" class="line"/>')
        for i, r in pts:
            last = i == len(days) - 1
            cls = "dot bad" if last and flagged else "dot"
            parts.append(f'<circle cx="{x(i):.1f}" cy="{y(r["pass_rate"]):.1f}" r="3" '
                         f'class="{cls}"><title>{esc(r["day"])}: {_pct(r["pass_rate"])} of '
                         f'{r["n_graded"]} graded (95% {_pct(r["pass_rate_low"])} to '
                         f'{_pct(r["pass_rate_high"])})</title></circle>')
    parts.append(_day_labels(days, x, h, most=4))
    parts.append("</svg>")
    return "".join(parts)


def _trend_chart(lines: dict[tuple[str, str], dict[date, float]], days: list[date],
                 unit: str) -> str:
    """One line per agent × model over the days; the y axis from 0 to the largest value."""
    w, h, left, top, bottom = 560, 200, 56, 10, 22
    pw, ph = w - left - 10, h - top - bottom
    top_value = max((v for s in lines.values() for v in s.values() if v is not None),
                    default=0.0) or 1.0

    def x(i: int) -> float:
        return left + pw * i / max(1, len(days) - 1)

    def y(v: float) -> float:
        return top + ph * (1 - v / top_value)

    parts = [f'<svg viewBox="0 0 {w} {h}" class="wide" role="img">']
    for frac in (0, 0.5, 1):
        v = top_value * frac
        parts.append(f'<line x1="{left}" x2="{w - 10}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                     f'class="grid"/><text x="{left - 4}" y="{y(v) + 3:.1f}" class="axis" '
                     f'text-anchor="end">{_num(v)}{esc(unit)}</text>')
    for n, (key, series) in enumerate(sorted(lines.items())):
        color = PALETTE[n % len(PALETTE)]
        pts = [(i, series[d]) for i, d in enumerate(days) if series.get(d) is not None]
        if not pts:
            continue
        parts.append(f'<polyline points="{" ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in pts)}" '
                     f'fill="none" stroke="{color}" stroke-width="2"><title>{esc(key[0])} · '
                     f'{esc(key[1])}</title></polyline>')
        for i, v in pts:
            parts.append(f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="2.5" fill="{color}">'
                         f'<title>{esc(key[0])} · {esc(key[1])} {days[i]}: {_num(v)}{esc(unit)}'
                         f'</title></circle>')
    parts.append(_day_labels(days, x, h))
    parts.append("</svg>")
    legend = "".join(f'<li><span class="swatch" style="background:{PALETTE[n % len(PALETTE)]}">'
                     f'</span>{esc(k[0])} · {esc(k[1])}</li>'
                     for n, k in enumerate(sorted(lines)))
    return "".join(parts) + f'<ul class="legend">{legend}</ul>'


def _day_labels(days: list[date], x: Any, h: int, most: int = 10) -> str:
    """Day ticks under a chart: every day up to `most`, else the first, middle and last; the
    end labels anchored inwards so they are never cut."""
    show = range(len(days)) if len(days) <= most else {0, len(days) // 2, len(days) - 1}
    out = []
    for i in sorted(show):
        anchor = "start" if i == 0 and len(days) > 1 else \
            "end" if i == len(days) - 1 and len(days) > 1 else "middle"
        out.append(f'<text x="{x(i):.1f}" y="{h - 6}" class="axis" '
                   f'text-anchor="{anchor}">{days[i].strftime("%m-%d")}</text>')
    return "".join(out)


def _num(v: float) -> str:
    if abs(v) >= 10_000:
        return f"{v / 1000:,.0f}k"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    if 0 < abs(v) < 1:
        return f"{v:.2g}"  # costs per run in dollars: 0.0042, not 0.0
    return f"{v:,.1f}"


def _share_bars(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return '<p class="muted">No tool calls on either side.</p>'
    biggest = max(abs(r["share_delta"] or 0) for r in rows) or 1.0
    out = ['<table class="bars"><tr><th>agent · model</th><th>tool</th><th>baseline</th>'
           '<th>latest</th><th>change in share of calls</th></tr>']
    for r in rows:
        d = r["share_delta"] or 0.0
        width = 120 * abs(d) / biggest
        bar = (f'<span class="bar {"up" if d > 0 else "down"}" style="width:{width:.0f}px">'
               f'</span> {_pct(d, signed=True)}')
        out.append(f'<tr><td>{esc(r["agent"])} · {esc(r["model"])}</td>'
                   f'<td><code>{esc(r["tool_name"])}</code></td>'
                   f'<td>{_pct(r["baseline_share"])} ({r["baseline_calls"]})</td>'
                   f'<td>{_pct(r["latest_share"])} ({r["latest_calls"]})</td>'
                   f'<td class="barcell">{bar}</td></tr>')
    out.append("</table>")
    return "".join(out)


# -- sections -------------------------------------------------------------------------------

def _drift(row: dict[str, Any]) -> str:
    drift = [
        ("tokens per run", _pct(row["tokens_per_run_pct_change"], signed=True)),
        ("cost per run", _usd_change(row)),
        ("p95 runtime", _pct(row["agent_runtime_ms_p95_pct_change"], signed=True)),
        ("truncated runs", f'{_pct(row["baseline_truncation_rate"])} → '
                           f'{_pct(row["latest_truncation_rate"])}'),
        ("contract violations", f'{_pct(row["baseline_contract_violation_rate"])} → '
                                f'{_pct(row["latest_contract_violation_rate"])}'),
    ]
    codes = ", ".join(f"<code>{esc(c)}</code>" for c in row["new_flag_codes"]) or "none"
    return ('<dl>' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in drift) +
            f'<dt>new flag codes</dt><dd>{codes}</dd></dl>')


def _usd_change(row: dict[str, Any]) -> str:
    before, after = row["baseline_cost_usd_per_run"], row["latest_cost_usd_per_run"]
    if before is None and after is None:
        return "–"
    usd = lambda v: "–" if v is None else f"${v:,.4f}"  # noqa: E731
    return f"{usd(before)} → {usd(after)} ({_pct(row['cost_usd_per_run_pct_change'], True)})"


def _card(r: PairChange) -> str:
    """One regressed pair: each reason with its figures, then the drift beside it."""
    row = r.row
    tags = "".join(f'<span class="tag bad">{nightly.REASON_WORDS[x]}</span> '
                   for x in r.reasons)
    body = []
    if "error_rate" in r.reasons:
        body.append(
            f'<p class="big">{_pct(row["error_rate_baseline"])} → '
            f'{_pct(row["error_rate_latest"])} errors</p>'
            f'<p>runs ending in <code>error</code>: {row["baseline_n_errors"]} of '
            f'{row["runs_baseline"]} in the baseline against {row["latest_n_errors"]} of '
            f'{row["runs_latest"]}; one-sided two-proportion z-test p = '
            f'<b>{_p(row["error_p_value"])}</b></p>')
    if "missing" in r.reasons:
        body.append(
            f'<p class="big">no run on {esc(row["latest_day"])}</p>'
            f'<p>{row["runs_baseline"]} runs in the baseline ({esc(row["baseline_start"])} to '
            f'{esc(row["baseline_end"])}), none on the latest day</p>')
    if "pass_rate" in r.reasons:
        body.append(
            f'<p class="big">{_pct(row["baseline_pass_rate"])} → '
            f'{_pct(row["latest_pass_rate"])}</p>'
            f'<p>pass rate, {row["baseline_n_passed"]}/{row["baseline_n_graded"]} graded in the '
            f'baseline against {row["latest_n_passed"]}/{row["latest_n_graded"]}; '
            f'two-proportion z-test p = <b>{_p(row["p_value"])}</b></p>'
            f'<p>paired on {row["n_paired_cases"]} steady test cases: {row["n_pass_to_fail"]} '
            f'pass → fail, {row["n_fail_to_pass"]} fail → pass (exact McNemar p = '
            f'{_p(row["paired_p_value"])}); {row["n_flaky_cases"]} flaky cases left out</p>')
    drift = _drift(row) if "missing" not in r.reasons else ""
    return (f'<div class="card bad"><h3>{tags}{esc(r.agent)} · {esc(r.model)}</h3>'
            + "".join(body) + drift + "</div>")


def _verdict_section(v: Verdict) -> str:
    """The first screen: every regressed pair by reason, then the missing test cases."""
    if v.all_clear:
        return f'<p class="ok">{esc(v.headline())}</p>'
    out = []
    if v.regressed:
        out.append('<div class="cards">' + "".join(_card(r) for r in v.regressed) + "</div>")
    else:
        out.append('<p class="muted">No agent and model pair crashed, went missing or lost '
                   'pass rate significantly.</p>')
    if v.missing_cases:
        items = []
        for (agent, model), cases in v.missing_by_pair().items():
            names = ", ".join(f"<code>{esc(c['test_case_id'])}</code> "
                              f'<span class="muted">({c["baseline_runs"]} baseline runs, last '
                              f"{esc(c['last_seen_day'])})</span>" for c in cases[:40])
            more = f" and {len(cases) - 40} more" if len(cases) > 40 else ""
            items.append(f"<li><b>{esc(agent)} · {esc(model)}</b>: {len(cases)} missing: "
                         f"{names}{more}</li>")
        out.append(f'<h3 style="margin-top:16px">{len(v.missing_cases)} test case'
                   f'{"" if len(v.missing_cases) == 1 else "s"} missing</h3><p class="muted">'
                   "Ran on at least half of the baseline days and not on the latest day "
                   "(<code>v_missing_test_cases</code>).</p>"
                   f'<ul class="missing">{"".join(items)}</ul>')
    return "".join(out)


def _regression_table(v: Verdict) -> str:
    out = ['<table><tr><th>agent · model</th><th>runs</th><th>error rate</th>'
           '<th>pass rate: baseline</th><th>latest</th><th>change</th><th>p-value</th>'
           '<th>paired p</th><th>tokens/run</th><th>cost/run</th><th>p95 runtime</th>'
           '<th>new flag codes</th>'
           '</tr>']
    for r in v.pairs:
        row = r.row
        cls = "bad" if r.regressed else ("good" if row["is_significant"] else "")
        out.append(
            f'<tr class="{cls}"><td>{esc(r.agent)} · {esc(r.model)}</td>'
            f'<td>{row["runs_baseline"]} → {row["runs_latest"]}</td>'
            f'<td>{_pct(row["error_rate_baseline"])} → {_pct(row["error_rate_latest"])}</td>'
            f'<td>{_pct(row["baseline_pass_rate"])} <span class="muted">of '
            f'{row["baseline_n_graded"]}</span></td>'
            f'<td>{_pct(row["latest_pass_rate"])} <span class="muted">of '
            f'{row["latest_n_graded"]}</span></td>'
            f'<td>{_pct(row["pass_rate_delta"], signed=True)}</td><td>{_p(row["p_value"])}</td>'
            f'<td>{_p(row["paired_p_value"])}</td>'
            f'<td>{_pct(row["tokens_per_run_pct_change"], signed=True)}</td>'
            f'<td>{_pct(row["cost_usd_per_run_pct_change"], signed=True)}</td>'
            f'<td>{_pct(row["agent_runtime_ms_p95_pct_change"], signed=True)}</td>'
            f'<td>{", ".join(esc(c) for c in row["new_flag_codes"]) or ""}</td></tr>')
    out.append("</table>")
    return "".join(out)


def _transcript(con: duckdb.DuckDBPyConnection, run_id: str) -> str:
    messages = _rows(con, "SELECT message_index, role, name, text, chars, tool_call_id "
                          "FROM messages WHERE run_id = ? AND source = 'response' "
                          "ORDER BY message_index", [run_id])
    calls: dict[int, list[dict[str, Any]]] = {}
    for c in _rows(con, "SELECT message_index, tool_name, coalesce(arguments, arguments_raw) "
                        "AS arguments, arguments_valid, result_message_index FROM tool_calls "
                        "WHERE run_id = ? AND source = 'response' ORDER BY message_index, "
                        "call_index", [run_id]):
        calls.setdefault(c["message_index"], []).append(c)
    out = ['<ol class="transcript">']
    for m in messages:
        text = m["text"] or ""
        cut = len(text) > MAX_MESSAGE_CHARS
        who = esc(m["role"]) + (f' <span class="muted">{esc(m["name"])}</span>'
                                if m["name"] else "")
        body = f'<pre>{esc(text[:MAX_MESSAGE_CHARS])}</pre>' if text else ""
        if cut:
            body += f'<p class="muted">… {m["chars"] - MAX_MESSAGE_CHARS:,} more characters</p>'
        for c in calls.get(m["message_index"], []):
            state = "" if c["result_message_index"] is not None else \
                ' <span class="tag">unanswered</span>'
            if not c["arguments_valid"]:
                state += ' <span class="tag">invalid arguments</span>'
            body += (f'<div class="call">→ <code>{esc(c["tool_name"])}</code>'
                     f'(<code>{esc((c["arguments"] or "")[:600])}</code>){state}</div>')
        out.append(f'<li class="msg {esc(m["role"])}"><div class="who">{who}</div>{body}</li>')
    out.append("</ol>")
    if not messages:
        out = ['<p class="muted">This run has no transcript.</p>']
    return "".join(out)


RUN_FACTS = ("SELECT run_id, day, status, score, outcome_explanation, outcome_error, "
             "final_response, input_tokens, output_tokens, agent_runtime_ms "
             "FROM runs WHERE run_id = ?")


def _run_column(con: duckdb.DuckDBPyConnection, run_id: str | None, label: str) -> str:
    """One side of a flip: the run's outcome, why it was graded so, what it cost, its final
    response and its transcript."""
    if run_id is None:
        return f'<div class="side"><h4>{label}</h4><p class="muted">no graded run</p></div>'
    found = _rows(con, RUN_FACTS, [run_id])
    if not found:
        return f'<div class="side"><h4>{label}</h4><p class="muted">run {esc(run_id)} ' \
               'is no longer in the warehouse</p></div>'
    r = found[0]
    tokens = "–" if r["input_tokens"] is None and r["output_tokens"] is None else \
        f'{(r["input_tokens"] or 0) + (r["output_tokens"] or 0):,}'
    runtime = "–" if r["agent_runtime_ms"] is None else f'{r["agent_runtime_ms"] / 1000:,.1f} s'
    why = r["outcome_explanation"] or r["outcome_error"]
    facts = [("status", esc(r["status"])), ("score", "–" if r["score"] is None
                                             else f'{r["score"]:.2f}'),
             ("explanation", f"<pre>{esc(why[:2000])}</pre>" if why else "–"),
             ("tokens", tokens), ("runtime", runtime)]
    return (f'<div class="side"><h4>{label} <span class="muted">{esc(r["day"])} · run '
            f'{esc(r["run_id"])}</span></h4><dl>'
            + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts) + "</dl>"
            f'<p><b>final response</b>:</p><pre class="final">'
            f'{esc((r["final_response"] or "")[:2000])}</pre>'
            f"{_transcript(con, r['run_id'])}</div>")


def _flips(con: duckdb.DuckDBPyConnection, flips: list[dict[str, Any]],
           flaky: list[dict[str, Any]]) -> str:
    out = []
    if not flips:
        out.append('<p class="muted">No test case with a steady baseline changed outcome.</p>')
    ordered = sorted(flips, key=lambda f: (f["direction"] != "pass_to_fail", f["agent"],
                                           f["model"], f["test_case_id"]))
    for f in ordered[:MAX_FLIPS]:
        arrow = "pass → fail" if f["direction"] == "pass_to_fail" else "fail → pass"
        cls = "bad" if f["direction"] == "pass_to_fail" else "good"
        out.append(
            f'<details class="flip {cls}"><summary><span class="tag {cls}">{arrow}</span> '
            f'<b>{esc(f["test_case_id"])}</b> · {esc(f["agent"])} · {esc(f["model"])} '
            f'<span class="muted">({f["baseline_runs"]} baseline runs all '
            f'{esc(f["baseline_status"])}; run {esc(f["latest_run_id"])})</span></summary>'
            '<div class="sides">'
            + _run_column(con, f["latest_run_id"], "latest · " + esc(f["latest_status"]))
            + _run_column(con, f["baseline_run_id"],
                          "last in the baseline · " + esc(f["baseline_status"]))
            + "</div></details>")
    if len(ordered) > MAX_FLIPS:
        out.append(f'<p class="muted">… and {len(ordered) - MAX_FLIPS} more: '
                   '<code>select * from v_test_case_flips</code></p>')
    if flaky:
        items = "".join(
            f'<li>{esc(c["test_case_id"])} · {esc(c["agent"])} · {esc(c["model"])} '
            f'<span class="muted">(baseline {c["baseline_passes"]} passed, '
            f'{c["baseline_fails"]} failed; latest {esc(c["latest_status"] or "not run")})'
            f'</span></li>' for c in flaky[:60])
        more = f"<li>… {len(flaky) - 60} more</li>" if len(flaky) > 60 else ""
        out.append(f'<details class="flaky"><summary>{len(flaky)} flaky test cases, reported '
                   f'apart and never counted as flips</summary><ul>{items}{more}</ul></details>')
    return "".join(out)


def _flags_table(rows: list[dict[str, Any]], latest: date, n_baseline_days: int) -> str:
    if not rows:
        return '<p class="muted">No findings in the window.</p>'
    out = ['<table><tr><th>code</th><th>severity</th><th>baseline per day</th>'
           '<th>latest day</th><th></th></tr>']
    for r in rows:
        per_day = (r["baseline"] or 0) / max(1, n_baseline_days)
        latest_n = r["latest"] or 0
        tag = '<span class="tag bad">new</span>' if latest_n and not r["baseline"] else ""
        worse = latest_n > 2 * per_day and latest_n >= 3
        out.append(f'<tr class="{"bad" if worse else ""}"><td><code>{esc(r["code"])}</code></td>'
                   f'<td>{esc(r["severity"])}</td><td>{per_day:.1f}</td><td>{latest_n}</td>'
                   f'<td>{tag}</td></tr>')
    out.append("</table>")
    return "".join(out)


CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#111827;
margin:0;background:#f9fafb}
main{max-width:1180px;margin:0 auto;padding:24px 28px 60px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:34px 0 10px;border-bottom:1px solid
#e5e7eb;padding-bottom:4px}h3{margin:0 0 6px;font-size:15px}
.muted{color:#6b7280}.ok{color:#047857;font-weight:600}
.headline{font-size:16px;margin:10px 0 0}.headline.bad{color:#b91c1c;font-weight:600}
.headline.ok{color:#047857;font-weight:600}
.cards{display:flex;flex-wrap:wrap;gap:14px}.card{background:#fff;border:1px solid #e5e7eb;
border-left:5px solid #dc2626;border-radius:6px;padding:12px 16px;flex:1 1 340px}
.card .big{font-size:26px;font-weight:700;margin:2px 0;color:#b91c1c}
dl{display:grid;grid-template-columns:max-content auto;gap:2px 12px;margin:8px 0 0}
dt{color:#6b7280}dd{margin:0}
table{border-collapse:collapse;background:#fff;width:100%;font-size:13px}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid #f0f1f3;vertical-align:top}
th{background:#f3f4f6;font-weight:600}tr.bad td{background:#fef2f2}
tr.good td{background:#f0fdf4}
.tag{display:inline-block;font-size:11px;padding:0 6px;border-radius:8px;background:#e5e7eb}
.tag.bad{background:#fee2e2;color:#991b1b}.tag.good{background:#dcfce7;color:#166534}
details{background:#fff;border:1px solid #e5e7eb;border-radius:6px;margin:6px 0;padding:6px 10px}
summary{cursor:pointer}
.transcript{list-style:none;padding:0;margin:8px 0}.msg{margin:6px 0;padding:6px 10px;
border-radius:6px;background:#f3f4f6}.msg.user{background:#eff6ff}.msg.assistant{background:
#f5f3ff}.msg.tool{background:#ecfdf5}.msg.system{background:#f9fafb;color:#4b5563}
.who{font-size:11px;text-transform:uppercase;letter-spacing:.04em;color:#6b7280}
pre{white-space:pre-wrap;word-break:break-word;margin:2px 0;font:12.5px/1.4 ui-monospace,
SFMono-Regular,Menlo,monospace}.call{font-size:12.5px;margin-top:3px}
.grid-charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(310px,1fr));gap:12px}
.chart{background:#fff;border:1px solid #e5e7eb;border-radius:6px;padding:8px 10px}
.chart.bad{border-color:#fca5a5}.chart h3{font-size:13px}
svg .grid{stroke:#e5e7eb}svg .axis{font-size:10px;fill:#6b7280}
svg .band{fill:#bfdbfe;opacity:.7}svg .line{fill:none;stroke:#2563eb;stroke-width:2}
svg .dot{fill:#2563eb}svg .dot.bad{fill:#dc2626;r:4.5}
.legend{list-style:none;padding:0;margin:4px 0;display:flex;flex-wrap:wrap;gap:4px 14px;
font-size:12px}.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;
margin-right:5px}
.trends{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:16px}
.trends>div{background:#fff;border:1px solid #e5e7eb;border-radius:6px;padding:8px 12px}
svg.wide{width:100%;height:auto}
.bar{display:inline-block;height:10px;vertical-align:middle;border-radius:2px}
.bar.up{background:#f59e0b}.bar.down{background:#6366f1}.barcell{white-space:nowrap}
.sides{display:grid;grid-template-columns:1fr 1fr;gap:12px}.side{min-width:0}
.side h4{margin:6px 0}.missing li{margin:3px 0}
footer{margin-top:40px;font-size:12px;color:#6b7280}
"""


def _page(title: str, sections: Iterable[str]) -> str:
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            # No script, no fetch: nothing in the page may run or load.
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src 'unsafe-inline'; img-src data:\">"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body><main>"
            + "".join(sections) + "</main></body></html>\n")


def write_report(home: Path, day: date | None = None, baseline_days: int = 7,
                 now: datetime | None = None) -> ReportSummary:
    """Write home/reports/nightly-<day>.html (atomically) and return what it says."""
    if baseline_days < 1:
        raise InputError("--baseline-days must be at least 1")
    con = warehouse.connect(home)
    try:
        latest = day or con.execute("SELECT max(day) FROM runs").fetchone()[0]  # type: ignore[index]
        if latest is None:
            raise InputError("the warehouse has no runs yet: run `runlake ingest PATH` first")
        params = [latest, baseline_days]
        n_latest = con.execute("SELECT count(*) FROM runs WHERE day = ?", [latest]).fetchone()
        n_window = con.execute("SELECT count(*) FROM runs WHERE day BETWEEN ?::DATE - "
                               "?::INTEGER AND ?", [latest, baseline_days, latest]).fetchone()
        # A night on which nothing ran is reported (every pair missing) when its baseline ran.
        if not n_window or not n_window[0]:
            raise InputError(f"no runs on {latest}; days with runs: " + ", ".join(
                str(r[0]) for r in con.execute(
                    "SELECT DISTINCT day FROM runs ORDER BY 1 DESC LIMIT 10").fetchall()))
        verdict = nightly.read(con, latest, baseline_days)
        start, end = verdict.baseline_start, verdict.baseline_end
        flips = _rows(con, "SELECT * FROM test_case_flips(?, ?)", params)
        flaky = _rows(con, "SELECT * FROM case_outcomes(?, ?) WHERE is_flaky "
                           "ORDER BY agent, model, test_case_id", params)
        days = [r[0] for r in con.execute(
            "SELECT DISTINCT day FROM runs WHERE day BETWEEN ? AND ? ORDER BY 1",
            [start, latest]).fetchall()]
        rates = _rows(con, "SELECT * FROM v_pass_rates WHERE day BETWEEN ? AND ?",
                      [start, latest])
        tokens = _rows(con, "SELECT day, agent, model, tokens_per_run_avg AS v FROM v_token_usage "
                            "WHERE day BETWEEN ? AND ?", [start, latest])
        cost = _rows(con, "SELECT day, agent, model, cost_usd_per_run AS v FROM v_token_usage "
                          "WHERE day BETWEEN ? AND ?", [start, latest])
        runtime = _rows(con, "SELECT day, agent, model, agent_runtime_ms_p95 AS v FROM v_runtime "
                             "WHERE day BETWEEN ? AND ?", [start, latest])
        shares = _rows(con, "SELECT * FROM tool_share_changes(?, ?) WHERE share_delta IS NOT "
                            "NULL ORDER BY abs(share_delta) DESC, agent, model, tool_name "
                            "LIMIT 15", params)
        flag_rows = _rows(con, "SELECT code, any_value(severity) AS severity, "
                               "sum(n_findings) FILTER (WHERE day < ?) AS baseline, "
                               "sum(n_findings) FILTER (WHERE day = ?) AS latest "
                               "FROM v_flag_summary WHERE day BETWEEN ? AND ? GROUP BY code "
                               "ORDER BY latest DESC NULLS LAST, code",
                          [latest, latest, start, latest])
        flips_html = _flips(con, flips, flaky)
    finally:
        con.close()

    summary = ReportSummary(path=home / "reports" / f"nightly-{latest.isoformat()}.html",
                            verdict=verdict, n_runs_latest=int((n_latest or (0,))[0]),
                            n_flips=len(flips),
                            n_pass_to_fail=sum(f["direction"] == "pass_to_fail" for f in flips),
                            n_flaky=len(flaky))
    flagged = {(r.agent, r.model) for r in verdict.by_reason("pass_rate")}
    pairs = [(r.agent, r.model) for r in verdict.pairs]
    by_pair: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rates:
        by_pair.setdefault((r["agent"], r["model"]), []).append(r)
    charts = "".join(
        f'<div class="chart{" bad" if p in flagged else ""}"><h3>{esc(p[0])} · {esc(p[1])}</h3>'
        f'{_pass_rate_chart(by_pair.get(p, []), days, p in flagged)}</div>'
        for p in pairs if any(r["pass_rate"] is not None for r in by_pair.get(p, [])))

    def series(rows: list[dict[str, Any]]) -> dict[tuple[str, str], dict[date, float]]:
        out: dict[tuple[str, str], dict[date, float]] = {}
        for r in rows:
            out.setdefault((r["agent"], r["model"]), {})[r["day"]] = r["v"]
        return out

    generated = (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    sections = [
        f"<header><h1>runlake nightly report · {latest}</h1>"
        f'<p class="muted">{summary.n_runs_latest} runs on {latest}, compared with '
        f"{start} to {end}. Significant: two-proportion z-test p &lt; 0.01; flaky test cases "
        f"(outcome changed within the baseline) are never counted as flips.</p>"
        f'<p class="headline {"ok" if verdict.all_clear else "bad"}">'
        f"{esc(verdict.headline())} {summary.n_pass_to_fail} test cases pass → fail, "
        f"{summary.n_flaky} flaky.</p></header>",
        "<section><h2>1. What regressed</h2>" + _verdict_section(verdict) +
        '<h3 style="margin-top:16px">Every agent and model</h3>' + _regression_table(verdict) +
        "</section>",
        "<section><h2>2. Flipped test cases</h2>" + flips_html + "</section>",
        "<section><h2>3. Pass rate per agent and model</h2><p class=\"muted\">Daily pass rate "
        "over graded runs with its Wilson 95% band.</p>"
        f'<div class="grid-charts">{charts}</div></section>',
        "<section><h2>4. Tokens, cost and runtime</h2><div class=\"trends\">"
        f"<div><h3>Tokens per run (average)</h3>{_trend_chart(series(tokens), days, '')}</div>"
        f"<div><h3>Cost per run (average, USD)</h3>{_trend_chart(series(cost), days, '')}</div>"
        f"<div><h3>Agent runtime p95</h3>{_trend_chart(series(runtime), days, ' ms')}</div>"
        "</div></section>",
        "<section><h2>5. Tool use: biggest changes in share of calls</h2>"
        + _share_bars(shares) + "</section>",
        "<section><h2>6. Flags by code</h2>" + _flags_table(flag_rows, latest, baseline_days)
        + "</section>",
        f"<footer>Generated by runlake at {generated} from {esc(warehouse.path(home).name)}. "
        "Query the same figures: <code>v_regressions</code>, <code>v_missing_test_cases</code>, "
        "<code>v_test_case_flips</code>, "
        "<code>v_flaky_cases</code>, <code>v_tool_share_changes</code>, "
        "<code>regressions(day, n)</code>.</footer>",
    ]
    page = _page(f"runlake nightly {latest}", sections)
    summary.path.parent.mkdir(parents=True, exist_ok=True)
    tmp = summary.path.with_name(f".{summary.path.name}.{uuid.uuid4().hex}")
    tmp.write_text(page, encoding="utf-8")
    os.replace(tmp, summary.path)
    return summary
