"""The lookup tables every warehouse connection holds: the model alias and price tables."""

import duckdb

from transforms.contracts import models
from transforms.lake.store import Store


def install_stored(con: duckdb.DuckDBPyConnection, store: Store) -> None:
    """model_aliases and model_prices as the last ingest stored them in the lake (else the
    shipped tables)."""
    models.install(con, models.stored(store) or models.load())
