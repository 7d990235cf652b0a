"""runlake's settings: one pydantic-settings object; nothing else reads the environment."""

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Where the warehouse lives and where new trace files land (`RUNLAKE_` variables)."""

    model_config = SettingsConfigDict(env_prefix="RUNLAKE_", extra="ignore")

    home: Path = Field(Path("warehouse"), description="Warehouse folder: lake/, "
                       "warehouse.duckdb, reports/.")
    landing: Path = Field(Path("data_samples"), description="Folder the pipeline ingests.")
    workers: int | None = Field(None, ge=1, le=64, description="Parallel parser processes "
                                "(default: the machine's cores, at most 8).")
