"""How much of a span file's LLM-call messages repeat an earlier message of the same trace:
what storing a trace's repeated prompt messages once would save.

    python bench/prompt_repeats.py bench/out/input-200mb-v2.spans.jsonl
    python bench/prompt_repeats.py bench/out/input-200mb-v2.spans.jsonl \
        --without-repeats bench/out/input-200mb-v2.distinct.spans.jsonl

Reads span JSONL (one span per line, or a `{"spans": [...]}` bulk line), hashes every message
of every LLM call's input and output (canonical JSON, sorted keys) and counts the ones whose
hash the same trace already had. With --without-repeats it also writes the same spans with
those messages left out: what a normalizer that skipped every repeat for free would read, so
that `bench/worker.py` and `runlake ingest` on it give the most such storage could save, in
work and in lake bytes.
"""

import argparse
import hashlib
from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("spans", type=Path)
    ap.add_argument("--without-repeats", type=Path, metavar="OUT")
    args = ap.parse_args()
    seen: dict[object, set[bytes]] = defaultdict(set)
    calls = total = repeats = size = repeated_size = 0
    out = open(args.without_repeats, "wb") if args.without_repeats else None  # noqa: SIM115
    try:
        with open(args.spans, "rb") as f:
            for line in f:
                try:
                    obj = orjson.loads(line)
                except orjson.JSONDecodeError:
                    if out is not None:
                        out.write(line)
                    continue
                spans: list[Any] = []
                if isinstance(obj, dict):
                    bulk = obj.get("spans")
                    spans = bulk if isinstance(bulk, list) else [obj]
                for span in spans:
                    lr = span.get("log_request") if isinstance(span, dict) else None
                    if not isinstance(lr, dict):
                        continue
                    calls += 1
                    ctx = span.get("context")
                    trace = ctx.get("trace_id") if isinstance(ctx, dict) else None
                    for direction in ("input", "output"):
                        part = lr.get(direction)
                        msgs = part.get("messages") if isinstance(part, dict) else None
                        if not isinstance(msgs, list):
                            continue
                        kept = []
                        for m in msgs:
                            data = orjson.dumps(m, option=orjson.OPT_SORT_KEYS)
                            digest = hashlib.blake2b(data, digest_size=16).digest()
                            total += 1
                            size += len(data)
                            if digest in seen[trace]:
                                repeats += 1
                                repeated_size += len(data)
                            else:
                                seen[trace].add(digest)
                                kept.append(m)
                        part["messages"] = kept
                if out is not None:
                    out.write(orjson.dumps(obj) + b"\n")
    finally:
        if out is not None:
            out.close()
    print(f"LLM calls {calls:,}; messages {total:,}, of which repeats {repeats:,} "
          f"({repeats / max(total, 1):.0%}); message bytes {size / 2**20:,.0f} MiB, in repeats "
          f"{repeated_size / 2**20:,.0f} MiB ({repeated_size / max(size, 1):.0%})")


if __name__ == "__main__":
    main()
