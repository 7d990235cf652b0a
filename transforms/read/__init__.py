"""Read: landing files to blocks of lines, and the worker's line loop."""
