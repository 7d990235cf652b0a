"""One group's verdict, as the warehouse's compare macros give it: the row of an agent and
model in the nightly verdict (`regressions(day, n)`) and of a group in `runlake compare`
(`compare_groups`), with its scores' rows and what changed between its runs; the reasons a
group regresses for, and the levels its q-values are held to."""

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from transforms.verdict.formatting import first_line, jsonable, p_short, score_mean

REASONS = ("error_rate", "missing", "pass_rate", "scores")
"""In the order the first screen shows them: a pair that crashed or did not run is worse news
than one that runs and fails more often."""

REASON_WORDS = {"error_rate": "crashed", "missing": "missing", "pass_rate": "pass rate",
                "scores": "score drop"}

MOST_CHANGES = 3
"""What-changed rows a summary line names under a pair (the page shows more)."""

CHANGE_ORDER = ("n_pass_to_fail DESC, n_flipped_cases DESC, n_cases DESC, field, "
                "before NULLS FIRST, after NULLS FIRST")
"""The order of what_changed rows: the change most failing cases show first."""


@cache
def significance_level() -> float:
    """The q-value a drop must be below to regress, as sql/macros sets it (the views use the
    macro itself); read from its SQL file on first use."""
    from transforms.warehouse.sqlfiles import constant

    return constant("significance_level")


@cache
def warning_level() -> float:
    """The q-value a drop below which is worth a warning, as sql/macros sets it; read from its
    SQL file on first use."""
    from transforms.warehouse.sqlfiles import constant

    return constant("warning_level")


def change_value(v: Any) -> str:
    """A what-changed value as a line shows it: `(none)` for a missing one, else its first
    line, cut short when long (first_line)."""
    return "(none)" if v is None else first_line(str(v), 60)


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
                f"p = {p_short(s['p_value'])}, q = {p_short(s['q_value'])})")

    def change_text(self, c: dict[str, Any]) -> str:
        """One change in plain words: `system_prompt_id sp-17 -> sp-18 in 8 of 8 failing
        cases, 40 cases` (failing: the group's pass -> fail cases)."""
        failing = int(self.row.get("n_pass_to_fail") or 0)
        n = c["n_cases"]
        where = (f"in {c['n_pass_to_fail']} of {failing} failing case"
                 f"{'' if failing == 1 else 's'}, {n} case{'' if n == 1 else 's'}" if failing
                 else f"in {n} case{'' if n == 1 else 's'}")
        return f"{c['field']} {change_value(c['before'])} -> {change_value(c['after'])} {where}"

    def changes_line(self, most: int = MOST_CHANGES) -> str | None:
        """`what changed: a; b; c (and N more)`, or None when nothing changed."""
        if not self.changes:
            return None
        more = len(self.changes) - most
        return ("what changed: " + "; ".join(self.change_text(c) for c in self.changes[:most])
                + (f" (and {more} more)" if more > 0 else ""))

    def json_scores(self) -> list[dict[str, Any]]:
        return [{"name": s["score_name"], **{k: jsonable(s[k]) for k in (
            "n_cases", "baseline_mean", "candidate_mean", "p_value", "q_value", "verdict")}}
            for s in self.scores]

    def json_changes(self) -> list[dict[str, Any]]:
        return [{k: jsonable(c[k]) for k in (
            "field", "before", "after", "n_cases", "n_flipped_cases", "n_pass_to_fail")}
            for c in self.changes]

    @property
    def reasons(self) -> list[str]:
        """Why the group regressed, in REASONS' words (none when it did not)."""
        return list(self.row["reasons"] or [])

    @property
    def regressed(self) -> bool:
        """Whether the group regressed for any of its reasons."""
        return bool(self.row["regressed"])

    @property
    def verdict(self) -> str:
        """regressed, improved, no_change or insufficient_evidence (the view's verdict)."""
        return str(self.row["verdict"])
