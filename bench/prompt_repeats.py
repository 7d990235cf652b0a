"""How much of a span file's LLM-call messages repeat an earlier message of the same trace:
what storing a trace's repeated prompt messages once would save.

    python bench/prompt_repeats.py bench/out/input-200mb-v2.spans.jsonl

Reads span JSONL (one span per line, or a `{"spans": [...]}` bulk line), hashes every message
of every LLM call's input and output (canonical JSON, sorted keys) and counts the ones whose
hash the same trace already had.
"""

import argparse
import hashlib
from collections import defaultdict
from pathlib import Path

import orjson


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("spans", type=Path)
    args = ap.parse_args()
    seen: dict[object, set[bytes]] = defaultdict(set)
    calls = total = repeats = size = repeated_size = 0
    with open(args.spans, "rb") as f:
        for line in f:
            try:
                obj = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if not isinstance(obj, dict):
                continue
            for span in obj.get("spans") or [obj]:
                lr = span.get("log_request") if isinstance(span, dict) else None
                if not isinstance(lr, dict):
                    continue
                calls += 1
                trace = (span.get("context") or {}).get("trace_id")
                for direction in ("input", "output"):
                    part = lr.get(direction)
                    for m in (part.get("messages") or []) if isinstance(part, dict) else []:
                        data = orjson.dumps(m, option=orjson.OPT_SORT_KEYS)
                        digest = hashlib.blake2b(data, digest_size=16).digest()
                        total += 1
                        size += len(data)
                        if digest in seen[trace]:
                            repeats += 1
                            repeated_size += len(data)
                        else:
                            seen[trace].add(digest)
    print(f"LLM calls {calls:,}; messages {total:,}, of which repeats {repeats:,} "
          f"({repeats / max(total, 1):.0%}); message bytes {size / 2**20:,.0f} MiB, in repeats "
          f"{repeated_size / 2**20:,.0f} MiB ({repeated_size / max(size, 1):.0%})")


if __name__ == "__main__":
    main()
