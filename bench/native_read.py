"""How fast a native JSON reader turns response lines into message rows, beside the worker.

    python bench/native_read.py bench/out/input-100mb-long.responses.jsonl [--repeat 3]

The question behind the next worker design: the ingest's parser processes build a Python tuple
per row (transforms.normalize), and on long transcripts that walk, not the derive, is most of
an ingest. This script times, on one thread each and interleaved:

- the worker: `normalize_block` over the file's blocks (parse, check, flag, row tuples), and
  the writing of the rows as staged Parquet (`StagedParts`), as bench/worker.py does;
- DuckDB's `read_json` with the envelope's and the messages' types declared, one row per
  message (`unnest`), written to Parquet.

DuckDB's reader does not apply runlake's JSON rules (the last duplicate key, no NaN, no lone
surrogate, integers beyond 64 bits kept exact) nor any contract or flag: the figure is what
parsing into columns costs natively, the floor a redesign starts from, not a like-for-like
replacement.
"""

import argparse
import shutil
import statistics
import tempfile
import time
from datetime import date
from pathlib import Path

import duckdb

from transforms.lake.files import sql_str
from transforms.normalize.worker import BlockTask, StagedParts, normalize_block, without_cyclic_gc
from transforms.read.readers import BlockReader, InputFile

MESSAGE = ("STRUCT(role VARCHAR, content VARCHAR, tool_call_id VARCHAR, name VARCHAR, "
           "tool_calls STRUCT(id VARCHAR, name VARCHAR, arguments JSON)[], "
           "thinking STRUCT(type VARCHAR, text VARCHAR)[])")
COLUMNS = ("{run_id: 'VARCHAR', agent: 'VARCHAR', started_at: 'VARCHAR', "
           f"response: 'STRUCT(final_response VARCHAR, messages {MESSAGE}[])'}}")


def worker(path: Path, out: Path) -> float:
    size = path.stat().st_size
    start = time.perf_counter()
    for part, block in enumerate(BlockReader(InputFile(path, path.name, "responses", "none",
                                                       size))):
        _, buffers = normalize_block(BlockTask(block, path.name, "responses", date(2026, 11, 1),
                                               str(out), str(part)))
        with without_cyclic_gc():
            staged = StagedParts(out, str(part))
            staged.write([buffers])
            staged.close()
    return time.perf_counter() - start


def native(path: Path, out: Path) -> float:
    start = time.perf_counter()
    con = duckdb.connect(config={"threads": 1})
    try:
        con.execute(f"""COPY (SELECT run_id, m.* FROM (
                SELECT run_id, unnest(response.messages) AS m
                FROM read_json({sql_str(str(path))}, format = 'newline_delimited',
                               maximum_object_size = 100000000, columns = {COLUMNS})))
            TO {sql_str(str(out / 'messages.parquet'))} (FORMAT parquet, COMPRESSION zstd)""")
    finally:
        con.close()
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("input", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    mb = args.input.stat().st_size / 2**20
    times: dict[str, list[float]] = {"worker": [], "duckdb": []}
    for _ in range(args.repeat):
        for name, run in (("worker", worker), ("duckdb", native)):
            out = Path(tempfile.mkdtemp(prefix="runlake-bench-native-"))
            try:
                times[name].append(run(args.input, out))
            finally:
                shutil.rmtree(out, ignore_errors=True)
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    for name, ts in times.items():
        print(f"{name}: median {statistics.median(ts):.2f} s of {len(ts)} "
              f"({', '.join(f'{t:.2f}' for t in ts)}), {mb / statistics.median(ts):.0f} MB/s "
              "on one thread")
    print(f"{args.input.name}: {mb:,.0f} MB; load average {load}")


if __name__ == "__main__":
    main()
