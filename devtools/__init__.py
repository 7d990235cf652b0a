"""Development tools: synthetic traces and generated docs; not part of the product."""
