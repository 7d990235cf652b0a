"""Normalizers: records of each input format -> rows of the lake tables; the worker that turns
a block of lines into staged Parquet (`worker`), and `runlake validate` over the same line loop
(`validate`)."""
