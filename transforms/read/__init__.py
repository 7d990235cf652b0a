"""Reading landing files: which files, and of what kind (`discover`, `landing`, and `remote`
for a bucket), how they are opened and hashed (`streams`) and cut into blocks of whole lines
(`readers`), dates in names and folders (`dates`), JSON text rules (`jsontext`), the worker
that turns a block of lines into staged Parquet (`worker`), and `runlake validate` over the
same line loop (`validate`)."""
