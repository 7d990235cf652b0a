"""Writes the sample landing folder: a week of nightly agent test runs, with realistic flaws.

    python data_samples/generate.py        # rewrites data_samples/YYYY-MM-DD/*.jsonl[.gz]

Deterministic: the same files every time. Four agents (one under the rich+strict response
contract), three models, both tool-call shapes, thinking blocks, content parts, the runs' spans
(LLM calls with tokens and prices, some partial or cut at max_tokens, a few runs whose own totals
disagree with their spans), a planted pass rate drop for travel-agent on the last day, and a
handful of bad lines (a cut line, a non-object,
invalid UTF-8, NaN, a repeated run_id, a bare body without run_id), a BOM + CRLF file and a
gzip file.
"""

import gzip
import io
import sys
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import random  # noqa: E402

from transforms.synth import dumps, make_spans, runs  # noqa: E402

HERE = Path(__file__).resolve().parent
DAYS = [date(2026, 11, 14) + timedelta(days=i) for i in range(7)]
PER_AGENT_PER_DAY = 12


def main() -> None:
    files: dict[Path, list[bytes]] = {}
    rng = random.Random(8)
    for day, agent, line in runs(seed=7, days=DAYS, per_agent_per_day=PER_AGENT_PER_DAY):
        path = HERE / day.isoformat() / f"{agent}.responses.jsonl"
        files.setdefault(path, []).append(dumps(line).encode())
        # Spans of the same runs, as the agents' tracing SDK writes them: one bulk line per
        # run, or one line per span.
        spans = make_spans(rng, line)
        span_path = HERE / day.isoformat() / f"{agent}.spans.jsonl"
        span_lines = [{"spans": spans}] if rng.random() < 0.5 else spans
        files.setdefault(span_path, []).extend(dumps(s).encode() for s in span_lines)
    last = HERE / DAYS[-1].isoformat() / "support-bot.responses.jsonl"
    good = files[last]
    files[last] = good[:3] + [
        good[3][: len(good[3]) // 2],                       # a line cut mid-write
        b"",                                                # blank lines
        b"   ",
        b'["not", "an", "object"]',
        b'{"run_id": "support-bot-bad-utf8", "response": {"final_response": "caf\xe9"}}',
        b'{"run_id": "support-bot-nan", "response": {"final_response": "x", '
        b'"metadata": {"total_input_tokens": NaN}}}',
        good[0],                                            # the same run delivered twice
        b'{"final_response": "Sorry, I could not finish.", "messages": []}',
    ] + good[4:]
    for path in sorted(files):
        path.parent.mkdir(parents=True, exist_ok=True)
        data = b"\n".join(files[path]) + b"\n"
        if path.parent.name == DAYS[-2].isoformat() and "travel-agent" in path.name:
            data = b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n")
        if path.parent.name == DAYS[-3].isoformat() and "research-agent" in path.name:
            buf = io.BytesIO()
            with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz:
                gz.write(data)
            path = path.with_name(path.name + ".gz")
            data = buf.getvalue()
        path.write_bytes(data)
        print(f"wrote {path.relative_to(HERE.parent)} ({len(data):,} bytes)")


if __name__ == "__main__":
    main()
