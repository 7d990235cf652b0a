"""The report's charts as geometry: coordinates, ticks, colours and the plain text of their
labels and tooltips. No markup is made here: `templates/report/charts.html` draws them as
inline SVG, and autoescaping covers every label (agent and model names come from traces).
"""

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from transforms.verdict.formatting import num, pct

PALETTE = ["#2563eb", "#d97706", "#059669", "#7c3aed", "#db2777", "#0891b2", "#65a30d",
           "#dc2626", "#4b5563", "#9333ea"]

Pair = tuple[str, str]


@dataclass
class Gridline:
    y: str
    label_y: str
    label: str


@dataclass
class DayLabel:
    x: str
    anchor: str
    text: str


@dataclass
class Point:
    x: str
    y: str
    title: str
    """The tooltip (a trend line's point: after its agent and model)."""
    cls: str = "dot"


@dataclass
class Chart:
    """An SVG's frame: its size, grid lines with their labels on the left and day ticks."""

    width: int
    height: int
    grid_from: int
    grid_to: int
    grid: list[Gridline]
    day_labels: list[DayLabel]

    @property
    def label_x(self) -> int:
        return self.grid_from - 4

    @property
    def day_label_y(self) -> int:
        return self.height - 6


@dataclass
class PassRateChart(Chart):
    band: str = ""
    """The Wilson band's polygon: upper bounds left to right, then lower bounds back."""
    line: str = ""
    dots: list[Point] = field(default_factory=list)


UNKNOWN = "unknown"
"""The warehouse's agent or model for a run whose trace names none (see runs.agent, runs.model)."""


def pair_label(agent: str, model: str) -> str:
    """A chart's name for an agent × model: the warehouse's `unknown` said as what it means,
    that the traces named no agent (or no model)."""
    return (f"{'no agent named' if agent == UNKNOWN else agent} · "
            f"{'no model named' if model == UNKNOWN else model}")


STEPS = (1, 2, 2.5, 5, 10)
"""The multiples of a power of ten a gridline step may be."""


def round_ticks(top: float, most: int = 4) -> list[float]:
    """Round gridline values from 0 to the first round value at or above `top`, in at most
    `most` equal steps, each step one of STEPS times a power of ten."""
    if top <= 0 or not math.isfinite(top):
        top = 1.0
    power = 10 ** math.floor(math.log10(top / most))
    step = next(m * power for m in STEPS if m * power * most >= top)
    n = math.ceil(round(top / step, 9))
    # Multiplying, not adding up, and rounding off the float noise (3 x 0.005 = 0.015).
    return [float(f"{i * step:.12g}") for i in range(n + 1)]


@dataclass
class Line:
    agent: str
    model: str
    color: str
    points: list[Point]

    @property
    def label(self) -> str:
        return pair_label(self.agent, self.model)

    @property
    def polyline(self) -> str:
        return " ".join(f"{p.x},{p.y}" for p in self.points)


@dataclass
class TrendChart(Chart):
    lines: list[Line] = field(default_factory=list)
    """Every agent × model in the legend, with its colour; one without values draws nothing."""


@dataclass
class ShareBar:
    row: dict[str, Any]
    width: str
    direction: str
    change: str


def _day_labels(days: list[date], x: Callable[[int], float], most: int = 10) -> list[DayLabel]:
    """Day ticks under a chart: every day up to `most`, else the first, middle and last; the
    end labels anchored inwards so they are never cut."""
    show = range(len(days)) if len(days) <= most else {0, len(days) // 2, len(days) - 1}
    out = []
    for i in sorted(show):
        anchor = "start" if i == 0 and len(days) > 1 else \
            "end" if i == len(days) - 1 and len(days) > 1 else "middle"
        out.append(DayLabel(f"{x(i):.1f}", anchor, days[i].strftime("%m-%d")))
    return out


def pass_rate_chart(series: list[dict[str, Any]], days: list[date],
                    flagged: bool) -> PassRateChart:
    """Pass rate by day with the Wilson 95% band; the latest point red when it regressed."""
    w, h, left, top, bottom = 300, 120, 34, 8, 20
    pw, ph = w - left - 8, h - top - bottom
    by_day = {r["day"]: r for r in series}

    def x(i: int) -> float:
        return left + (pw * i / max(1, len(days) - 1))

    def y(v: float) -> float:
        return top + ph * (1 - v)

    chart = PassRateChart(
        width=w, height=h, grid_from=left, grid_to=w - 8,
        grid=[Gridline(f"{y(v):.1f}", f"{y(v) + 3:.1f}", f"{v * 100:.0f}%") for v in (0, 0.5, 1)],
        day_labels=_day_labels(days, x, most=4))
    pts = [(i, by_day[d]) for i, d in enumerate(days)
           if d in by_day and by_day[d]["pass_rate"] is not None]
    if pts:
        upper = " ".join(f"{x(i):.1f},{y(r['pass_rate_high']):.1f}" for i, r in pts)
        lower = " ".join(f"{x(i):.1f},{y(r['pass_rate_low']):.1f}" for i, r in reversed(pts))
        chart.band = f"{upper} {lower}"
        chart.line = " ".join(f"{x(i):.1f},{y(r['pass_rate']):.1f}" for i, r in pts)
        for i, r in pts:
            last = i == len(days) - 1
            chart.dots.append(Point(
                f"{x(i):.1f}", f"{y(r['pass_rate']):.1f}",
                f"{r['day']}: {pct(r['pass_rate'])} of {r['n_graded']} graded "
                f"(95% {pct(r['pass_rate_low'])} to {pct(r['pass_rate_high'])})",
                "dot bad" if last and flagged else "dot"))
    return chart


def trend_chart(lines: dict[Pair, dict[date, float]], days: list[date],
                unit: str) -> TrendChart:
    """One line per agent × model with a value over the days (a pair without any, such as
    runs that carry no tokens or no price, is left out, legend included); the y axis from 0
    to the round value at or above the largest, gridlines at round values."""
    w, h, left, top, bottom = 560, 200, 56, 10, 22
    pw, ph = w - left - 10, h - top - bottom
    # Colours by each pair's place among all of them, so a pair has one colour in every chart.
    colors = {pair: PALETTE[n % len(PALETTE)] for n, pair in enumerate(sorted(lines))}
    lines = {pair: s for pair, s in lines.items() if any(v is not None for v in s.values())}
    ticks = round_ticks(max((v for s in lines.values() for v in s.values() if v is not None),
                            default=0.0))
    top_value = ticks[-1]

    def x(i: int) -> float:
        return left + pw * i / max(1, len(days) - 1)

    def y(v: float) -> float:
        return top + ph * (1 - v / top_value)

    chart = TrendChart(
        width=w, height=h, grid_from=left, grid_to=w - 10,
        grid=[Gridline(f"{y(v):.1f}", f"{y(v) + 3:.1f}", f"{num(v)}{unit}")
              for v in ticks],
        day_labels=_day_labels(days, x))
    for (agent, model), series in sorted(lines.items()):
        chart.lines.append(Line(agent, model, colors[agent, model], [
            Point(f"{x(i):.1f}", f"{y(series[d]):.1f}", f"{d}: {num(series[d])}{unit}")
            for i, d in enumerate(days) if series.get(d) is not None]))
    return chart


def series(rows: list[dict[str, Any]]) -> dict[Pair, dict[date, float]]:
    """Rows of (day, agent, model, v) as one day → value series per agent × model."""
    out: dict[Pair, dict[date, float]] = {}
    for r in rows:
        out.setdefault((r["agent"], r["model"]), {})[r["day"]] = r["v"]
    return out


def share_bars(rows: list[dict[str, Any]]) -> list[ShareBar]:
    """Each change in share of calls as a bar, the biggest 120 px wide."""
    if not rows:
        return []
    biggest = max(abs(r["share_delta"] or 0) for r in rows) or 1.0
    out = []
    for r in rows:
        d = r["share_delta"] or 0.0
        out.append(ShareBar(r, f"{120 * abs(d) / biggest:.0f}", "up" if d > 0 else "down",
                            pct(d, signed=True)))
    return out
