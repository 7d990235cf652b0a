"""How a verdict writes text and figures, for the nightly report and `runlake compare` alike:
the one rule for trace text, percentages, p-values, money, axis numbers, score means, error
lines and Markdown cells."""

import html
import math
import re
from typing import Any

from markupsafe import Markup

_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


def _unbidi(text: str) -> str:
    return _BIDI.sub(lambda m: f"U+{ord(m[0]):04X}", text)


def plain(value: Any) -> Any:
    """What the page shows for a value: None as nothing and every bidi control (which could
    reorder the text around it) as U+XXXX. The templates pass every `{{ … }}` through this
    before autoescaping; markup the templates built themselves (a macro's output) stays
    markup, its bidi controls spelled out all the same."""
    if isinstance(value, Markup):
        return Markup(_unbidi(value))
    if value is None:
        return ""
    return _unbidi(str(value))


def esc(value: Any) -> str:
    """Text for HTML and SVG, quotes included: nothing a trace holds can become markup, and
    no bidi control from a trace can reorder the text around it (shown as U+XXXX). The
    templates apply the same rule by themselves (`plain`, then autoescaping)."""
    return html.escape(_unbidi("" if value is None else str(value)), quote=True)


def pct(v: float | None, signed: bool = False) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{v * 100:+.0f}%" if signed else f"{v * 100:.0f}%"


def p_value(v: float | None) -> str:
    if v is None:
        return "–"
    if v < 0.0001:
        return f"{v:.1e}"
    return f"{v:.4f}" if v < 0.01 else f"{v:.3f}"


def p_short(v: float | None) -> str:
    """A p- or q-value as a verdict's line shows it: two significant digits, in scientific
    notation when very small."""
    if v is None:
        return "–"
    return f"{v:.1e}" if v < 0.0001 else f"{v:.2g}"


def usd(v: float | None) -> str:
    """Dollars with four decimals and thousands separated: `$0.0042`."""
    return "–" if v is None else f"${v:,.4f}"


def whole(v: float | None) -> str:
    """A count or mean as a whole number, thousands separated: `1,204`."""
    return "–" if v is None else f"{v:,.0f}"


def score_mean(v: float | None) -> str:
    """A score's mean as lines and the page show it: three significant digits."""
    return "–" if v is None else f"{v:.3g}"


def first_line(text: str | None, limit: int = 200) -> str:
    """The first non-blank line of an error text, cut at `limit` characters."""
    for line in (text or "").splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= limit else line[:limit - 1] + "…"
    return ""


def jsonable(v: Any) -> Any:
    """A value as JSON holds it: DuckDB's floats as plain floats, the rest as they are."""
    return float(v) if isinstance(v, float) else v


def num(v: float) -> str:
    """An axis or point value: 12k, 950, 3.5, 2 (a whole number without decimals), or two
    significant digits below 1 written out (costs per run in dollars: 0.0042, 0.00002; never
    0.0 or 2e-05)."""
    if abs(v) >= 10_000:
        return f"{v / 1000:,.0f}k"
    if abs(v) >= 100 or v == int(v):
        return f"{v:,.0f}"
    if abs(v) < 1:
        decimals = 1 - math.floor(math.log10(abs(float(f"{v:.2g}"))))
        return f"{v:.{decimals}f}".rstrip("0").rstrip(".")
    return f"{v:,.1f}"


def usd_change(row: dict[str, Any]) -> str:
    """Cost per run, baseline → latest, with the change."""
    before, after = row["baseline_cost_usd_per_run"], row["latest_cost_usd_per_run"]
    if before is None and after is None:
        return "–"
    return f"{usd(before)} → {usd(after)} ({pct(row['cost_usd_per_run_pct_change'], True)})"


_BREAKS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
"""What would break a Markdown line or reach a terminal as a command: every control character
(CR, LF, ESC, BEL, ...) and Unicode's line and paragraph separators."""


def md(value: Any, most: int = 80) -> str:
    """A Markdown table cell or inline text: its first `most` characters, with markup
    characters and entities escaped (an escape is never cut in two), on one line, with no
    control character (a run of them becomes a space) and bidirectional controls shown as U+XXXX."""
    text = _unbidi(_BREAKS.sub(" ", "" if value is None else str(value)))[:most]
    for ch in "\\|`*_[]<>#":
        text = text.replace(ch, "\\" + ch)
    return text.replace("&", "&amp;")
