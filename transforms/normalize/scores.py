"""Named scores and evaluations -> rows of `scores`.

Three shapes carry them:

- a response line's `outcome.scores`: an object of name -> number, or name -> `{value, label,
  explanation}` (transforms.normalize.responses);
- a `gen_ai.evaluation.result` event of the OpenTelemetry GenAI conventions, on a span
  (transforms.normalize.spans) or as an OTLP log record (transforms.normalize.otlp): its
  attributes `gen_ai.evaluation.name`, `gen_ai.evaluation.score.value`,
  `gen_ai.evaluation.score.label`, `gen_ai.evaluation.explanation` and `gen_ai.response.id`.

What cannot be read (no name, a value that is not a number) is said in the returned problems,
which the caller raises as a finding (score_malformed); the rest of the score is kept.
"""

import math
from datetime import date
from typing import Any, NamedTuple

from transforms.normalize.columns import RowAdder
from transforms.read import jsontext
from transforms.read.readers import describe

EVALUATION_EVENT = "gen_ai.evaluation.result"
NAME = "gen_ai.evaluation.name"
VALUE = "gen_ai.evaluation.score.value"
LABEL = "gen_ai.evaluation.score.label"
EXPLANATION = "gen_ai.evaluation.explanation"
RESPONSE_ID = "gen_ai.response.id"
NAME_LIMIT = 200
"""Characters of a score's name kept (a longer one is cut, and flagged)."""
EXPLANATION_LIMIT = 50_000
"""Characters of an explanation kept (as final_response)."""
MAX_SCORES = 1_000
"""Scores read from one outcome.scores: more is not a grading, and is cut (and flagged)."""


class Score(NamedTuple):
    name: str
    value: float | None
    label: str | None
    explanation: str | None
    response_id: str | None = None


def _number(v: Any, what: str, problems: list[str]) -> float | None:
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, int | float):
        f = float(v)
        if math.isfinite(f):
            return f
    elif isinstance(v, str):
        try:
            f = float(v)
        except ValueError:
            pass
        else:
            if math.isfinite(f):
                return f
    if v is not None:
        problems.append(f"{what} is {describe(v) if not isinstance(v, int | float) else v}, "
                        "not a finite number")
    return None


def _text(v: Any, what: str, problems: list[str], limit: int = EXPLANATION_LIMIT) -> str | None:
    if v is None:
        return None
    if isinstance(v, str):
        return v[:limit]
    if isinstance(v, bool | int | float):
        return jsontext.dumps(v)[:limit]
    text, _ = jsontext.text(v)
    problems.append(f"{what} is {describe(v)}, kept as JSON text")
    return text[:limit]


def _name(name: str, where: str, problems: list[str]) -> str:
    if len(name) <= NAME_LIMIT:
        return name
    problems.append(f"{where}: a name of {len(name):,} characters, cut at {NAME_LIMIT}")
    return name[:NAME_LIMIT]


def evaluation(attrs: dict[str, Any], where: str, problems: list[str]) -> Score | None:
    """The score of a gen_ai.evaluation.result event's attributes; None (with a problem) when it
    names no evaluation."""
    name = attrs.get(NAME)
    if not isinstance(name, str) or not name:
        problems.append(f"{where} has no {NAME}" if name in (None, "") else
                        f"{where}: {NAME} is {describe(name)}")
        return None
    name = _name(name, where, problems)
    value = _number(attrs.get(VALUE), f"{where} {name!r}: {VALUE}", problems)
    label = _text(attrs.get(LABEL), f"{where} {name!r}: {LABEL}", problems, 200)
    why = _text(attrs.get(EXPLANATION), f"{where} {name!r}: {EXPLANATION}", problems)
    rid = attrs.get(RESPONSE_ID)
    return Score(name, value, label, why, rid if isinstance(rid, str) and rid else None)


def outcome_scores(scores: Any, problems: list[str]) -> list[Score]:
    """The entries of a response line's outcome.scores."""
    if scores is None:
        return []
    if not isinstance(scores, dict):
        problems.append(f"outcome.scores is {describe(scores)}, not an object of name -> score")
        return []
    out: list[Score] = []
    for i, (name, v) in enumerate(scores.items()):
        if i == MAX_SCORES:
            problems.append(f"outcome.scores has {len(scores)} entries; the first {MAX_SCORES} "
                            "are kept")
            break
        where = f"outcome.scores[{name[:60]!r}]"
        if not name:
            problems.append("outcome.scores has an entry with an empty name; dropped")
            continue
        name = _name(name, "outcome.scores", problems)
        if isinstance(v, dict):
            value = _number(v.get("value"), f"{where}.value", problems)
            label = _text(v.get("label"), f"{where}.label", problems, 200)
            why = v.get("explanation", v.get("reason"))
            out.append(Score(name, value, label, _text(why, f"{where}.explanation", problems)))
        elif isinstance(v, str):
            # A bare label ("pass", "C"): kept as the label, and as the value when it is a number.
            out.append(Score(name, _number(v, where, []), v[:200], None))
        else:
            value = _number(v, where, problems)
            if value is not None or v is None:
                out.append(Score(name, value, None, None))
    return out


def add_row(add: RowAdder, score: Score, run_id: str | None, day: date, source: str,
            trace_id: str | None, span_id: str | None, index: int, source_file: str,
            line: int) -> None:
    """Add a scores row (transforms.contracts.schemas.SCORES) with the table's adder."""
    add(run_id=run_id, day=day, name=score.name, value=score.value, label=score.label,
        explanation=score.explanation, source=source, trace_id=trace_id, span_id=span_id,
        response_id=score.response_id, score_index=index, source_file=source_file,
        source_line=line)
