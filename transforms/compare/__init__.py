"""`runlake compare`: a candidate's runs against a baseline's, on the same test cases.

Two predicates over `runs` (transforms.compare.predicate checks them) choose the runs of each
side; `--by` chooses the groups (agent, model, both, or none). Every figure comes from the
warehouse's own table macros, the ones `v_regressions` uses: `compare_selection` marks each
run's side (a test case run on one side only within its group takes no side), `compare_groups`
(through `compare_runs`) tests each group (the stratified CMH test, Benjamini–Hochberg q-values
across the groups, mde, the error rate, the verdict), `compare_cases` gives the flipped cases,
`compare_pass_at_k` pass@k and pass^k where cases repeat, `compare_scores` each named score's
change on the same cases, `compare_what_changed` what changed between the sides' runs of a case,
and `compare_one_sided` the cases left out. The queries run on a sandboxed connection
(transforms.db.sandbox), as `runlake sql`'s do; the predicates are written into them only
after the check, and the rest is bound parameters.
"""

from dataclasses import dataclass, field
from typing import Any

import duckdb

from transforms.compare.predicate import check
from transforms.errors import InputError
from transforms.verdict.formatting import jsonable, p_short, pct, usd, whole
from transforms.verdict.reading import RunDetail, rows, run_details
from transforms.verdict.verdict_row import CHANGE_ORDER, REASON_WORDS, VerdictRow

BY = {"agent": ("agent",), "model": ("model",), "agent,model": ("agent", "model"), "none": ()}
"""The groupings --by offers and the columns each groups by."""

MAX_FLIPS = 30
"""Flipped cases the HTML page shows with their runs; the rest are listed."""

JSON_KEYS = ("group", "n_strata", "baseline_n_graded", "candidate_n_graded",
             "baseline_pass_rate", "candidate_pass_rate", "cmh_p_value", "rise_p_value",
             "q_value", "rise_q_value", "mde", "verdict", "reasons", "scores", "what_changed")
"""The keys of each group's object in `--format json` (and `pass_at_k` where cases repeat on
both sides): `reasons` why it regressed, `scores` each named score's change (name, n_cases,
baseline_mean, candidate_mean, p_value, q_value, verdict) and `what_changed` the fields whose
value changed between the sides' runs of a case (field, before, after, n_cases,
n_flipped_cases, n_pass_to_fail)."""

Row = dict[str, Any]


@dataclass
class Group(VerdictRow):
    """One group's row of compare_groups, and its pass@k rows (none when no case repeats)."""

    by: tuple[str, ...]
    pass_at_k: list[Row] = field(default_factory=list)

    @property
    def key(self) -> dict[str, Any]:
        return {c: self.row[c] for c in self.by}

    @property
    def label(self) -> str:
        """`travel-agent / gpt-4o`, or `all runs` when not grouped."""
        return " / ".join(str(v) for v in self.key.values()) if self.by else "all runs"

    def json(self) -> dict[str, Any]:
        lists = {"group": self.key, "reasons": self.reasons, "scores": self.json_scores(),
                 "what_changed": self.json_changes()}
        out = {k: lists[k] if k in lists else jsonable(self.row[k]) for k in JSON_KEYS}
        both = self.pass_at_k_both_sides()
        if any(r["k"] > 1 for r in both):
            out["pass_at_k"] = [{k: jsonable(v) for k, v in r.items()
                                 if k not in ("agent", "model")} for r in both]
        return out

    def pass_at_k_both_sides(self) -> list[Row]:
        """The pass@k rows of the k that both sides have a case with at least k graded runs
        of: a k beyond one side's trials has no value on that side, and is left out."""
        return [r for r in self.pass_at_k if r["baseline_n_cases"] and r["candidate_n_cases"]]

    def line(self) -> str:
        """The group's verdict and figures in one plain line (no markup)."""
        r = self.row
        parts = [f"{pct(r['baseline_pass_rate'])} -> {pct(r['candidate_pass_rate'])} passed "
                 f"({r['baseline_n_passed']}/{r['baseline_n_graded']} against "
                 f"{r['candidate_n_passed']}/{r['candidate_n_graded']})"]
        if r["cmh_p_value"] is not None:
            parts.append(f"on the same {r['n_strata']} test cases drop p = "
                         f"{p_short(r['cmh_p_value'])} q = {p_short(r['q_value'])}, rise p = "
                         f"{p_short(r['rise_p_value'])} q = {p_short(r['rise_q_value'])}")
        elif r["pass_rate_p_value"] is not None:
            parts.append(f"drop p = {p_short(r['pass_rate_p_value'])} q = {p_short(r['q_value'])} "
                         "(no case graded on both sides varies)")
        parts.append(f"flips {r['n_pass_to_fail']} pass -> fail, {r['n_fail_to_pass']} "
                     "fail -> pass")
        if r["mde"] is not None:
            parts.append(f"mde {pct(r['mde'])}")
        if "error_rate" in self.reasons or r["candidate_n_errors"]:
            parts.append(f"errors {pct(r['error_rate_baseline'])} -> "
                         f"{pct(r['error_rate_candidate'])} (p = {p_short(r['error_p_value'])})")
        if r["baseline_cost_usd_per_run"] is not None or \
                r["candidate_cost_usd_per_run"] is not None:
            parts.append(f"cost/run {usd(r['baseline_cost_usd_per_run'])} -> "
                         f"{usd(r['candidate_cost_usd_per_run'])}")
        if r["baseline_tokens_per_run"] is not None or \
                r["candidate_tokens_per_run"] is not None:
            parts.append(f"tokens/run {whole(r['baseline_tokens_per_run'])} -> "
                         f"{whole(r['candidate_tokens_per_run'])}")
        both = [k for k in self.pass_at_k_both_sides() if k["k"] > 1]
        for k in both[-1:]:
            parts.append(f"pass@{k['k']} {pct(k['baseline_pass_at_k'])} -> "
                         f"{pct(k['candidate_pass_at_k'])}, pass^{k['k']} "
                         f"{pct(k['baseline_pass_hat_k'])} -> "
                         f"{pct(k['candidate_pass_hat_k'])}")
        if "scores" in self.reasons:
            parts.append("scores fell: " + ", ".join(self.score_text(s)
                                                     for s in self.regressed_scores))
        why = f" ({', '.join(REASON_WORDS[x] for x in self.reasons)})" if self.reasons else ""
        return f"{self.verdict.upper()}{why} {self.label}: " + "; ".join(parts)


@dataclass
class Comparison:
    """What `runlake compare` found."""

    baseline: str
    candidate: str
    by: tuple[str, ...]
    groups: list[Group]
    one_sided: list[Row]
    """Per group, test case (null: runs without one) and side: the runs left out."""
    flips: list[Row]
    """compare_cases rows whose last runs went different ways."""
    n_baseline_runs: int
    n_candidate_runs: int
    n_candidate_errors: int = 0
    """Candidate runs with status error, counted or not (a case on one side only, no test
    case): what `--fail-on-crash` fails on."""
    runs: dict[str, RunDetail | None] = field(default_factory=dict)
    """The flipped cases' runs (for the HTML page), by run id."""
    costs: dict[str, Any] = field(default_factory=dict)
    """cost_usd of those runs, by run id."""

    @property
    def regressed(self) -> list[Group]:
        return [g for g in self.groups if g.regressed]

    @property
    def any_regressed(self) -> bool:
        return bool(self.regressed)

    def one_sided_by_group(self) -> dict[str, list[Row]]:
        out: dict[str, list[Row]] = {}
        for r in self.one_sided:
            out.setdefault(Group(r, self.by).label, []).append(r)
        return out

    def missing_cases(self, group: Group) -> list[Row]:
        """The group's test cases the baseline ran and the candidate did not."""
        return [r for r in self.one_sided if r["side"] == "baseline"
                and r["test_case_id"] is not None
                and all(r[c] == group.row[c] for c in self.by)]

    def headline(self) -> str:
        counts: dict[str, int] = {}
        for g in self.groups:
            counts[g.verdict] = counts.get(g.verdict, 0) + 1
        said = ", ".join(f"{n} {v.replace('_', ' ')}" for v, n in sorted(counts.items()))
        n = len(self.groups)
        return (f"{n} group{'' if n == 1 else 's'}: {said or 'none'}; "
                f"{self.n_baseline_runs} baseline runs, {self.n_candidate_runs} candidate runs")


SIDES = ("WITH compare_sides AS (SELECT run_id, coalesce(({b}), false) AS is_baseline, "
         "coalesce(({c}), false) AS is_candidate FROM runs "
         "WHERE coalesce(({b}), false) OR coalesce(({c}), false)), "
         "compared_runs AS (SELECT * FROM compare_selection('compare_sides', ?, ?)) ")


def compare(con: duckdb.DuckDBPyConnection, baseline: str, candidate: str,
            by: str = "agent", details: bool = False) -> Comparison:
    """Compare the runs `candidate` chooses with those `baseline` chooses, per `by` group.
    `details`: read the flipped cases' runs too (for the HTML page). Raises InputError for a
    refused or empty predicate, or runs on both sides."""
    if by not in BY:
        raise InputError(f"--by {by!r}: one of {', '.join(BY)}")
    columns = {r[0].lower() for r in con.execute("DESCRIBE runs").fetchall()}
    b = check(baseline, columns, "--baseline")
    c = check(candidate, columns, "--candidate")
    for text, sql, option in ((baseline, b, "--baseline"), (candidate, c, "--candidate")):
        kind = con.execute(f"DESCRIBE SELECT ({sql}) AS p FROM runs").fetchall()[0][1]
        if kind != "BOOLEAN":
            raise InputError(f"{option} {text!r} is a {kind} value, not a condition (true or "
                             "false) over runs")
    cols = BY[by]
    flags = ["agent" in cols, "model" in cols]
    head = SIDES.format(b=b, c=c)
    counts = con.execute(head + "SELECT count(*) FILTER (WHERE in_baseline), count(*) FILTER "
                         "(WHERE in_candidate), count(*) FILTER (WHERE in_baseline AND "
                         "in_candidate), any_value(run_id) FILTER (WHERE in_baseline AND "
                         "in_candidate), count(*) FILTER (WHERE in_candidate AND status = "
                         "'error') FROM compared_runs", flags).fetchone()
    assert counts is not None
    n_b, n_c, n_both, example, n_errors = counts
    if n_both:
        raise InputError(f"{n_both} runs match both --baseline and --candidate (run "
                         f"{example!r}): make the predicates exclusive")
    for n, text, option in ((n_b, baseline, "--baseline"), (n_c, candidate, "--candidate")):
        if not n:
            raise InputError(f"{option} {text!r} matches no run")
    groups = [Group(r, cols) for r in rows(
        con, head + "SELECT * FROM compare_runs('compare_sides', ?, ?) ORDER BY regressed DESC, "
        "verdict, q_value NULLS LAST, agent NULLS FIRST, model NULLS FIRST", flags * 2)]
    by_key: dict[tuple[Any, ...], list[Row]] = {}
    for r in rows(con, head + "SELECT * FROM compare_pass_at_k('compared_runs') "
                  "ORDER BY agent, model, k", flags):
        by_key.setdefault((r["agent"], r["model"]), []).append(r)
    scores: dict[tuple[Any, ...], list[Row]] = {}
    for r in rows(con, head + "SELECT * FROM compare_scores('compared_runs') ORDER BY agent, "
                  "model, q_value NULLS LAST, score_name", flags):
        scores.setdefault((r["agent"], r["model"]), []).append(r)
    changes: dict[tuple[Any, ...], list[Row]] = {}
    for r in rows(con, head + "SELECT * FROM compare_what_changed('compared_runs') ORDER BY "
                  "agent, model, " + CHANGE_ORDER, flags):
        changes.setdefault((r["agent"], r["model"]), []).append(r)
    for g in groups:
        key = (g.row["agent"], g.row["model"])
        g.pass_at_k = by_key.get(key, [])
        g.scores = scores.get(key, [])
        g.changes = changes.get(key, [])
    one_sided = rows(con, head + "SELECT * FROM compare_one_sided('compared_runs') ORDER BY "
                     "agent NULLS FIRST, model NULLS FIRST, side, test_case_id NULLS LAST", flags)
    flips = rows(con, head + "SELECT * FROM compare_cases('compared_runs') WHERE direction IS "
                 "NOT NULL ORDER BY direction DESC, agent NULLS FIRST, model NULLS FIRST, "
                 "test_case_id", flags)
    result = Comparison(baseline, candidate, cols, groups, one_sided, flips, int(n_b), int(n_c),
                        int(n_errors))
    if details:
        wanted = [r for f in flips[:MAX_FLIPS] for r in (f["candidate_run_id"],
                                                          f["baseline_run_id"])]
        result.runs = run_details(con, list(dict.fromkeys(wanted)))
        result.costs = dict(con.execute(
            "SELECT run_id, cost_usd FROM runs WHERE run_id IN (SELECT unnest(?::VARCHAR[]))",
            [wanted]).fetchall())
    return result

