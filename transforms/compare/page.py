"""`runlake compare --html`: the comparison page, rendered by the report's templates
(`templates/report/compare.html`, autoescaped as every report template is:
transforms.report.page)."""

from datetime import UTC, datetime
from pathlib import Path

from transforms.compare import MAX_FLIPS, Comparison
from transforms.report.page import environment, write_page
from transforms.verdict.formatting import usd, whole

TEMPLATE = "report/compare.html"


def write_compare(result: Comparison, path: Path, now: datetime | None = None) -> None:
    """Write the comparison page of `result` to `path`, atomically."""

    def secs(v: float | None) -> str:
        return "–" if v is None else f"{v / 1000:,.1f} s"

    write_page(path, environment().get_template(TEMPLATE).render(
        c=result, max_flips=MAX_FLIPS, usd=usd, num=whole, secs=secs,
        generated=(now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")) + "\n")
