"""One parser worker's cost on a file: normalize and stage each of its blocks in this process.

    python bench/worker.py bench/out/input-200mb-v2.spans.jsonl --kind spans

Reads the file into the ingest's blocks (`BlockReader`, 16 MiB of whole lines) and runs each
through the worker's two steps, one after the other, without the pool, the lake or the derived
tables: `normalize_block` (parse, check, flag, build row tuples) and the writing of the rows
as staged Parquet parts (`StagedParts`). Prints the seconds of each step, summed over the
blocks, and the rows of the transcript tables, so that two inputs or two versions of the
normalizer compare on the work one worker does per byte.
"""

import argparse
import shutil
import tempfile
import time
from datetime import date
from pathlib import Path

from transforms.normalize.worker import BlockTask, StagedParts, normalize_block, without_cyclic_gc
from transforms.read.readers import BlockReader, InputFile


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("input", type=Path)
    ap.add_argument("--kind", choices=["responses", "spans", "otlp"], default="responses")
    args = ap.parse_args()
    size = args.input.stat().st_size
    blocks = list(BlockReader(InputFile(args.input, args.input.name, args.kind, "none", size)))
    parts = Path(tempfile.mkdtemp(prefix="runlake-bench-worker-"))
    normalize = stage = 0.0
    rows = {"messages": 0, "tool_calls": 0, "thinking": 0}
    try:
        for part, block in enumerate(blocks):
            start = time.perf_counter()
            _, buffers = normalize_block(BlockTask(block, args.input.name, args.kind,
                                                   date(2026, 11, 1), str(parts), str(part)))
            middle = time.perf_counter()
            with without_cyclic_gc():  # as process_batch stages them
                out = StagedParts(parts, str(part))
                out.write([buffers])
                out.close()
            stage += time.perf_counter() - middle
            normalize += middle - start
            for t in rows:
                rows[t] += buffers.rows(t)
    finally:
        shutil.rmtree(parts, ignore_errors=True)
    mb = size / 2**20
    print(f"{args.input.name}: {mb:,.0f} MB in {len(blocks)} blocks; normalize {normalize:.2f} s, "
          f"stage {stage:.2f} s, so {mb / (normalize + stage):.1f} MB/s for one worker; rows: "
          + ", ".join(f"{t} {n:,}" for t, n in rows.items()))


if __name__ == "__main__":
    main()
