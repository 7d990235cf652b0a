"""Asset families, one module each."""
