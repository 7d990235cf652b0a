"""Reading landing files: which files and of what kind (`readers`, `landing`), how they are
opened and hashed (`streams`), dates in names and folders (`dates`), JSON text rules
(`jsontext`), the worker that turns a block of lines into staged Parquet (`worker`), and
`runlake validate` over the same line loop (`validate`)."""
