"""Reading landing files: which files, and of what kind (`discover`, `landing`, and `remote`
for a bucket), how they are opened and hashed (`streams`) and cut into blocks of whole lines
(`readers`, and `ranges` for a large file's byte ranges), dates in names and folders (`dates`),
JSON text rules (`jsontext`). What becomes of a block's lines is transforms.normalize's."""
