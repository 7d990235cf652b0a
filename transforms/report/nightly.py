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

import json
import re
import unicodedata
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import duckdb

from transforms.errors import RunlakeError
from transforms.report.fmt import pct
from transforms.warehouse.sqlfiles import constant

SIGNIFICANCE_LEVEL = constant("significance_level")
WARNING_LEVEL = constant("warning_level")
"""The two p-value levels, as sql/macros sets them (the views use the macros themselves)."""

REASONS = ("error_rate", "missing", "pass_rate", "scores")
"""In the order the first screen shows them: a pair that crashed or did not run is worse news
than one that runs and fails more often."""

REASON_WORDS = {"error_rate": "crashed", "missing": "missing", "pass_rate": "pass rate",
                "scores": "score drop"}

MOST_CHANGES = 3
"""What-changed rows a summary line names under a pair (the page shows more)."""

EXIT_REGRESSED = 3
"""`runlake report --fail-on-regression` exits with this code when anything regressed (1 is
an error of runlake itself, 2 a bad argument or input)."""

WEBHOOK_TIMEOUT_S = 10.0

CHANGE_ORDER = ("n_pass_to_fail DESC, n_flipped_cases DESC, n_cases DESC, field, "
                "before NULLS FIRST, after NULLS FIRST")
"""The order of what_changed rows: the change most failing cases show first."""


class NotifyError(RunlakeError):
    """The webhook could not be reached or refused the summary."""


def rows(con: duckdb.DuckDBPyConnection, sql: str,
         params: list[Any] | tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    """A query's rows as dicts keyed by column name."""
    cur = con.execute(sql, list(params))
    names = [d[0] for d in cur.description or []]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


@dataclass
class VerdictRow:
    """A row of compare_groups' verdict columns, as `regressions(day, n)` (a PairChange) and
    `runlake compare` (a compare.Group) both read it."""

    row: dict[str, Any]
    scores: list[dict[str, Any]] = field(default_factory=list, kw_only=True)
    """The group's compare_scores rows (candidate_mean the latest side's mean)."""
    changes: list[dict[str, Any]] = field(default_factory=list, kw_only=True)
    """The group's compare_what_changed rows, the ones most of its pass -> fail cases show
    first."""

    @property
    def regressed_scores(self) -> list[dict[str, Any]]:
        return [s for s in self.scores if s["verdict"] == "regressed"]

    def score_text(self, s: dict[str, Any]) -> str:
        """One score's change in plain words: `helpfulness 0.72 -> 0.66 on 40 cases
        (Wilcoxon p = 0.0001, q = 0.0003)`."""
        n = s["n_cases"]
        return (f"{s['score_name']} {score_mean(s['baseline_mean'])} -> "
                f"{score_mean(s['candidate_mean'])} on {n} case{'' if n == 1 else 's'} (Wilcoxon "
                f"p = {_p(s['p_value'])}, q = {_p(s['q_value'])})")

    def change_text(self, c: dict[str, Any]) -> str:
        """One change in plain words: `system_prompt_id sp-17 -> sp-18 in 8 of 8 failing
        cases, 40 cases` (failing: the group's pass -> fail cases)."""
        failing = int(self.row.get("n_pass_to_fail") or 0)
        n = c["n_cases"]
        where = (f"in {c['n_pass_to_fail']} of {failing} failing case"
                 f"{'' if failing == 1 else 's'}, {n} case{'' if n == 1 else 's'}" if failing
                 else f"in {n} case{'' if n == 1 else 's'}")
        return f"{c['field']} {_value(c['before'])} -> {_value(c['after'])} {where}"

    def changes_line(self, most: int = MOST_CHANGES) -> str | None:
        """`what changed: a; b; c (and N more)`, or None when nothing changed."""
        if not self.changes:
            return None
        more = len(self.changes) - most
        return ("what changed: " + "; ".join(self.change_text(c) for c in self.changes[:most])
                + (f" (and {more} more)" if more > 0 else ""))

    def json_scores(self) -> list[dict[str, Any]]:
        return [{"name": s["score_name"], **{k: _jsonable(s[k]) for k in (
            "n_cases", "baseline_mean", "candidate_mean", "p_value", "q_value", "verdict")}}
            for s in self.scores]

    def json_changes(self) -> list[dict[str, Any]]:
        return [{k: _jsonable(c[k]) for k in (
            "field", "before", "after", "n_cases", "n_flipped_cases", "n_pass_to_fail")}
            for c in self.changes]

    @property
    def reasons(self) -> list[str]:
        return list(self.row["reasons"] or [])

    @property
    def regressed(self) -> bool:
        return bool(self.row["regressed"])

    @property
    def verdict(self) -> str:
        """regressed, improved, no_change or insufficient_evidence (the view's verdict)."""
        return str(self.row["verdict"])


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
                         f"{r['runs_latest']}; p = {_p(r['error_p_value'])})")
        if "missing" in self.reasons:
            parts.append(f"missing: no run on {r['latest_day']} ({r['runs_baseline']} runs in "
                         "the baseline)")
        if "pass_rate" in self.reasons:
            on = (f"on the same {r['n_strata']} test cases p = {_p(r['cmh_p_value'])}"
                  if r["cmh_p_value"] is not None else f"p = {_p(r['pass_rate_p_value'])}")
            parts.append(f"pass rate {pct(r['baseline_pass_rate'])} -> "
                         f"{pct(r['latest_pass_rate'])} ({on}, q = {_p(r['q_value'])})")
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
                and p.row["q_value"] is not None and p.row["q_value"] < WARNING_LEVEL
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
                **{k: _jsonable(p.row[k]) for k in (
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


_BREAKS = re.compile("[\t\n\v\f\r\x1c-\x1e\x85\u2028\u2029]")
_MENTION = re.compile(r"(?<!\w)@")
_HIDDEN = ("Cc", "Cf", "Cs", "Co", "Zl", "Zp")
"""Control characters (ESC, BEL...), format characters (bidi overrides and isolates, zero
widths, the byte-order mark), surrogates, private-use characters and line separators."""


def chat_safe(text: str) -> str:
    """Trace text as a chat tool shows it as plain text, never as markup: line breaks and tabs
    as spaces; control, bidi, zero-width and private characters removed; `&`, `<` and `>` as
    Slack's `&amp;`, `&lt;` and `&gt;` (so `<!channel>` and `<https://…|label>` are text, not a
    mention or a link); `](` as `] (` (no Markdown link `[label](url)` where Markdown is read);
    an `@` that starts a word as the fullwidth `＠` (no `@here` or `@channel` mention in
    Mattermost and other tools that read the bare word)."""
    text = _BREAKS.sub(" ", text)
    text = "".join(c for c in text if unicodedata.category(c) not in _HIDDEN)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("](", "] (")  # no Markdown link: `[label](url)` needs them together
    return _MENTION.sub("\uff20", text)


def chat_safe_values(value: Any) -> Any:
    """Every string in a JSON value through `chat_safe` (numbers, booleans, null kept)."""
    if isinstance(value, str):
        return chat_safe(value)
    if isinstance(value, dict):
        return {k: chat_safe_values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [chat_safe_values(v) for v in value]
    return value


def first_line(text: str | None, limit: int = 200) -> str:
    """The first non-blank line of an error text, cut at `limit` characters."""
    for line in (text or "").splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= limit else line[:limit - 1] + "…"
    return ""


def _jsonable(v: Any) -> Any:
    return float(v) if isinstance(v, float) else v



def score_mean(v: float | None) -> str:
    """A score's mean as lines and the page show it: three significant digits."""
    return "–" if v is None else f"{v:.3g}"


def _value(v: Any) -> str:
    """A what-changed value as a line shows it: `(none)` for a missing one, else its first
    line, cut short when long (first_line)."""
    return "(none)" if v is None else first_line(str(v), 60)


def _p(v: float | None) -> str:
    if v is None:
        return "–"
    return f"{v:.1e}" if v < 0.0001 else f"{v:.2g}"


def read(con: duckdb.DuckDBPyConnection, latest: date, baseline_days: int) -> Verdict:
    """The verdict for `latest` against the `baseline_days` days before it. On a warehouse
    file it is computed once per process for the lake version the file was built for (the
    Dagster partition run asks for it in its checks and again in its report)."""
    from transforms.warehouse import built_for

    built = built_for(con)
    key = None if built is None else (*built, latest, baseline_days)
    if key is not None and key in _VERDICTS:
        return _VERDICTS[key]
    verdict = _read(con, latest, baseline_days)
    if key is not None:
        _VERDICTS.clear()  # the newest only
        _VERDICTS[key] = verdict
    return verdict


_VERDICTS: dict[tuple[Any, ...], Verdict] = {}


def _read(con: duckdb.DuckDBPyConnection, latest: date, baseline_days: int) -> Verdict:
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


def notify(verdict: Verdict, url: str, report: str | None = None) -> None:
    """POST the verdict's JSON summary to `url` (http or https). Raises NotifyError."""
    scheme = urllib.parse.urlsplit(url).scheme
    if scheme not in ("http", "https"):
        raise NotifyError(f"the webhook URL must start with http:// or https://, not {scheme!r}")
    body = json.dumps(verdict.payload(report)).encode()
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers={"Content-Type": "application/json",
                                          "User-Agent": "runlake"})
    try:
        with urllib.request.urlopen(req, timeout=WEBHOOK_TIMEOUT_S) as resp:  # noqa: S310
            resp.read(1024)
    except urllib.error.HTTPError as e:
        raise NotifyError(f"the webhook answered {e.code} {e.reason}") from e
    except (urllib.error.URLError, OSError, TimeoutError) as e:
        reason = getattr(e, "reason", e)
        raise NotifyError(f"the webhook could not be reached: {reason}") from e
