"""runlake: trace files in, a Delta Lake of normalized tables and DuckDB views out.

One folder per stage of the pipeline, in the order data goes through them:

- `kinds/`: the input kinds, one module each (its file names, reader, normalizer, flags and
  help), and the one registry the readers, the workers and the CLI's --kind derive from.
- `read/`: landing files found, opened (.gz, .zst) and cut into blocks of whole lines; the
  worker's line loop; `runlake validate`.
- `contracts/`: the input contracts as pydantic models, the lake's table schemas, the flag
  catalog, the tool registry and the model alias and price tables.
- `normalize/`: one normalizer per input format, from parsed records to rows and flags.
- `lake/`: the Delta tables: the all-or-nothing commit of staged parts, upkeep, doctor, migration.
- `warehouse/`: the SQL under sql/ in build order, the derived tables, the published views,
  the data checks and the read-only query policy.
- `report/`: the nightly verdict and its HTML page.
- `importers/`: other tools' result files converted to runlake's formats; the package itself
  is the registry of the formats `runlake import` reads.
- `cli/`: the `runlake` command.

`ingest.py` drives one ingest through read, normalize and lake, then publishes the warehouse
(`block_scheduler.py` shares the files' blocks among the parser processes, `ingest_report.py`
says what each file gave);
`forget.py` takes files' rows out; `settings.py` is the one reader of the environment.
"""
