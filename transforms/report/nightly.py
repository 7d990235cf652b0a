"""The nightly verdict: what regressed on a day against its baseline, and why.

One reading of `regressions(day, n)`, `missing_test_cases(day, n)` and the day's rows of
`v_crashed_runs` that the report's first screen, `runlake report` (and its
`--fail-on-regression` exit code), the Dagster check and the webhook all share, so that they can
never disagree. A pair regressed for one or more reasons:

- `error_rate`: its share of runs with status `error` rose significantly (crashed);
- `missing`: it ran in the baseline and not at all on the day;
- `pass_rate`: its pass rate over graded runs fell, on the same test cases, with a
  Benjamini–Hochberg q-value below the significance level;
- `scores`: a named score fell on the same test cases (the Wilcoxon signed-rank test of
  `score_regressions(day, n)`, its q-value below the significance level).

Each pair also carries its scores' rows and what changed between its runs
(`what_changed(day, n)`), which the page and every summary put under a regressed pair.

Test cases that ran regularly in the baseline and not on the day are listed apart, and so is
every run that crashed on the day, significant or not. A pair whose night could not show a
drop of half its pass rate (`insufficient_evidence`) is said to be so, never "no change".
"""

from dataclasses import dataclass, field
from datetime import date
from typing import Any

import duckdb

from transforms.report.webhook import chat_safe, chat_safe_values
from transforms.verdict.formatting import first_line, jsonable, p_short, pct
from transforms.verdict.reading import rows
from transforms.verdict.verdict_row import (
    CHANGE_ORDER,
    REASON_WORDS,
    REASONS,
    VerdictRow,
    warning_level,
)


@dataclass
class PairChange(VerdictRow):
    """One agent and model's row of `regressions(day, n)`."""

    @property
    def agent(self) -> str:
        return str(self.row["agent"])

    @property
    def model(self) -> str:
        return str(self.row["model"])

    def evidence_line(self) -> str:
        """Why an insufficient-evidence pair says nothing, in one plain line."""
        r = self.row
        n = r["latest_n_graded"] or 0
        if not n:
            return f"{self.agent} / {self.model}: no graded run on {r['latest_day']}"
        if not r["baseline_n_graded"]:
            return (f"{self.agent} / {self.model}: {n} graded run{'' if n == 1 else 's'} and "
                    "none in the baseline to compare with")
        runs = f"{self.agent} / {self.model}: {n} graded run{'' if n == 1 else 's'}"
        if float(r["mde"]) >= 1:
            return f"{runs}: not even a drop from 100% to 0% would show"
        return f"{runs}: a drop under {float(r['mde']) * 100:.0f} points would not show"

    def line(self) -> str:
        """What happened, in one plain line (no markup; the caller escapes for its medium)."""
        r = self.row
        parts = []
        if "error_rate" in self.reasons:
            parts.append(f"crashed: error rate {pct(r['error_rate_baseline'])} -> "
                         f"{pct(r['error_rate_latest'])} of runs ({r['latest_n_errors']} of "
                         f"{r['runs_latest']}; p = {p_short(r['error_p_value'])})")
        if "missing" in self.reasons:
            parts.append(f"missing: no run on {r['latest_day']} ({r['runs_baseline']} runs in "
                         "the baseline)")
        if "pass_rate" in self.reasons:
            on = (f"on the same {r['n_strata']} test cases p = {p_short(r['cmh_p_value'])}"
                  if r["cmh_p_value"] is not None else f"p = {p_short(r['pass_rate_p_value'])}")
            parts.append(f"pass rate {pct(r['baseline_pass_rate'])} -> "
                         f"{pct(r['latest_pass_rate'])} ({on}, q = {p_short(r['q_value'])})")
        if "scores" in self.reasons:
            parts.append("scores fell: " + ", ".join(self.score_text(s)
                                                     for s in self.regressed_scores))
        return f"{self.agent} / {self.model}: " + "; ".join(parts)


@dataclass
class Verdict:
    """Everything that regressed on `latest_day` against `baseline_start`..`baseline_end`."""

    latest_day: date
    baseline_start: date
    baseline_end: date
    pairs: list[PairChange] = field(default_factory=list)
    missing_cases: list[dict[str, Any]] = field(default_factory=list)
    crashed_runs: list[dict[str, Any]] = field(default_factory=list)
    """Every run with status error on latest_day (v_crashed_runs), by agent, model, start."""
    baseline_run_days: list[date] = field(default_factory=list)
    """The days of the baseline window that have runs, in order."""

    def baseline_span(self) -> str:
        """The baseline as the page and summaries name it: its first to its last day with runs
        (a window day without runs, before the first landing day say, is not named), with the
        number of such days when some in between had none."""
        days = self.baseline_run_days
        window = (self.baseline_end - self.baseline_start).days + 1
        if not days:
            return f"no runs in the {window} days before"
        span = f"{days[0]}" if len(days) == 1 else f"{days[0]} to {days[-1]}"
        gaps = len(days) < (days[-1] - days[0]).days + 1
        return span + (f" ({len(days)} days with runs)" if gaps else "")

    @property
    def regressed(self) -> list[PairChange]:
        """Regressed pairs, crashed first, then missing, then pass-rate drops."""
        return sorted((p for p in self.pairs if p.regressed),
                      key=lambda p: (min(REASONS.index(x) for x in p.reasons), p.agent, p.model))

    def suggestive_drops(self) -> list[PairChange]:
        """Pairs whose pass rate fell with a q-value below warning_level() but not below
        significance_level(): worth a warning, not a regression."""
        return [p for p in self.pairs if "pass_rate" not in p.reasons
                and p.row["q_value"] is not None and p.row["q_value"] < warning_level()
                and (p.row["latest_pass_rate"] or 0) < (p.row["baseline_pass_rate"] or 0)]

    @property
    def insufficient(self) -> list[PairChange]:
        """Pairs whose night could not show a drop of half the pass rate (verdict
        insufficient_evidence) and that had graded runs on one side at least."""
        return [p for p in self.pairs if p.verdict == "insufficient_evidence"
                and (p.row["latest_n_graded"] or p.row["baseline_n_graded"])]

    def crashed_by_pair(self) -> dict[tuple[str, str], list[dict[str, Any]]]:
        """The day's crashed runs by agent and model, in the order they were read."""
        out: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for r in self.crashed_runs:
            out.setdefault((str(r["agent"]), str(r["model"])), []).append(r)
        return out

    def crashed_lines(self) -> list[str]:
        """One plain line per agent and model with a crashed run on the day:
        `<agent> / <model>: N runs (<first error>)`."""
        out = []
        for (agent, model), runs in self.crashed_by_pair().items():
            first = first_line(runs[0]["outcome_error"]) or "no error text"
            out.append(f"{agent} / {model}: {len(runs)} run{'' if len(runs) == 1 else 's'} "
                       f"({first})")
        return out

    def by_reason(self, reason: str) -> list[PairChange]:
        return [p for p in self.regressed if reason in p.reasons]

    @property
    def all_clear(self) -> bool:
        return not self.regressed and not self.missing_cases

    def missing_by_pair(self) -> dict[tuple[str, str], list[dict[str, Any]]]:
        out: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for c in self.missing_cases:
            out.setdefault((c["agent"], c["model"]), []).append(c)
        return out

    def headline(self) -> str:
        """One plain sentence: counts by reason with the pairs named, and the missing cases."""
        if self.all_clear:
            return ("No regression: no agent and model crashed, went missing, lost pass rate or "
                    "a score significantly, and no regular test case is missing.")
        said = []
        for reason in REASONS:
            hit = self.by_reason(reason)
            if hit:
                said.append(f"{len(hit)} {REASON_WORDS[reason]} ("
                            + ", ".join(f"{p.agent} / {p.model}" for p in hit) + ")")
        n = len(self.regressed)
        text = (f"{n} agent and model pair{'' if n == 1 else 's'} regressed: " + "; ".join(said)
                if n else "No agent and model pair regressed")
        if self.missing_cases:
            m = len(self.missing_cases)
            text += (f"; {m} test case{'' if m == 1 else 's'} missing ("
                     + ", ".join(f"{a} / {mo}: {len(cs)}"
                                 for (a, mo), cs in self.missing_by_pair().items()) + ")")
        return text + "."

    def crash_sentence(self) -> str:
        """The day's crashed runs in one sentence, or an empty string when none crashed."""
        n = len(self.crashed_runs)
        if not n:
            return ""
        pairs = self.crashed_by_pair()
        return (f"{n} run{'' if n == 1 else 's'} crashed ("
                + ", ".join(f"{a} / {m}: {len(rs)}" for (a, m), rs in pairs.items()) + ").")

    def payload(self, report: str | None = None) -> dict[str, Any]:
        """The JSON summary the webhook receives (`text` for chat tools that show one field)."""
        return {
            "text": chat_safe(f"runlake {self.latest_day}: {self.headline()}"),
            "latest_day": self.latest_day.isoformat(),
            "baseline_start": self.baseline_start.isoformat(),
            "baseline_end": self.baseline_end.isoformat(),
            "report": report,
            **chat_safe_values({"regressed": [{
                "agent": p.agent, "model": p.model, "reasons": p.reasons,
                **{k: jsonable(p.row[k]) for k in (
                    "runs_baseline", "runs_latest", "error_rate_baseline", "error_rate_latest",
                    "error_p_value", "baseline_pass_rate", "latest_pass_rate", "p_value",
                    "n_strata", "cmh_p_value", "q_value", "mde", "verdict")},
                "scores": [s for s in p.json_scores() if s["verdict"] == "regressed"],
                "what_changed": p.json_changes()[:20],
            } for p in self.regressed],
            "crashed_runs": [{
                "run_id": r["run_id"], "agent": r["agent"], "model": r["model"],
                "test_case_id": r["test_case_id"], "error": first_line(r["outcome_error"]),
            } for r in self.crashed_runs[:100]],
            "n_crashed_runs": len(self.crashed_runs),
            "missing_test_cases": [{
                "agent": c["agent"], "model": c["model"], "test_case_id": c["test_case_id"],
                "baseline_runs": int(c["baseline_runs"]),
                "last_seen_day": c["last_seen_day"].isoformat(),
            } for c in self.missing_cases]}),
        }


def read(con: duckdb.DuckDBPyConnection, latest: date, baseline_days: int) -> Verdict:
    """The verdict for `latest` against the `baseline_days` days before it. On a warehouse
    file it is computed once per process for the lake version the file was built for (the
    Dagster partition run asks for it in its checks and again in its report)."""
    from transforms.warehouse import built_for

    built = built_for(con)
    key = None if built is None else (*built, latest, baseline_days)
    if key is not None and key in _VERDICTS:
        return _VERDICTS[key]
    verdict = read_uncached(con, latest, baseline_days)
    if key is not None:
        _VERDICTS.clear()  # the newest only
        _VERDICTS[key] = verdict
    return verdict


_VERDICTS: dict[tuple[Any, ...], Verdict] = {}


def read_uncached(con: duckdb.DuckDBPyConnection, latest: date, baseline_days: int
                  ) -> Verdict:
    """The verdict for `latest` against the `baseline_days` days before it, read afresh (what
    `read` caches)."""
    params = [latest, baseline_days]
    # The window and the baseline days that have runs, in one query.
    window = rows(con, "SELECT w.*, (SELECT list(DISTINCT day ORDER BY day) FROM runs "
                       "WHERE day BETWEEN w.baseline_start AND w.baseline_end) AS run_days "
                       "FROM comparison_window(?, ?) AS w", params)[0]
    # Each pair with its scores' rows and what changed, in the one query of the verdict.
    # Runs without an agent or model name (unknown) come after the named pairs of their
    # standing.
    pairs = []
    for r in rows(con, "SELECT r.*, coalesce(s.score_rows, []) AS score_rows, "
                       "coalesce(c.change_rows, []) AS change_rows FROM regressions(?, ?) AS r "
                       "LEFT JOIN (SELECT agent, model, list(s ORDER BY s.q_value NULLS LAST, "
                       "s.score_name) AS score_rows FROM score_regressions(?, ?) AS s "
                       "GROUP BY agent, model) AS s USING (agent, model) "
                       "LEFT JOIN (SELECT agent, model, list(c ORDER BY "
                       + ", ".join(f"c.{k}" for k in CHANGE_ORDER.split(", ")) +
                       ") AS change_rows FROM what_changed(?, ?) AS c GROUP BY agent, model) "
                       "AS c USING (agent, model) ORDER BY r.regressed DESC, r.is_regression "
                       "DESC, r.agent = 'unknown' OR r.model = 'unknown', r.q_value NULLS LAST, "
                       "r.agent, r.model", params * 3):
        scores = [{**x, "candidate_mean": x["latest_mean"]} for x in r.pop("score_rows")]
        pairs.append(PairChange(r, scores=scores, changes=list(r.pop("change_rows"))))
    missing = rows(con, "SELECT * FROM missing_test_cases(?, ?) "
                        "ORDER BY agent, model, test_case_id", params)
    crashed = rows(con, "SELECT * FROM v_crashed_runs WHERE day = ? "
                        "ORDER BY agent, model, started_at, run_id", [latest])
    run_days = list(window["run_days"] or [])
    return Verdict(latest, window["baseline_start"], window["baseline_end"], pairs, missing,
                   crashed, run_days)
