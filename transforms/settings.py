"""runlake's settings: one pydantic-settings object; nothing else reads the environment."""

from pathlib import Path

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from transforms.errors import InputError


class Settings(BaseSettings):
    """Where the warehouse lives, where new trace files land, and the limits the pipeline's
    checks hold the data to (`RUNLAKE_` variables)."""

    model_config = SettingsConfigDict(env_prefix="RUNLAKE_", extra="ignore")

    home: Path = Field(Path("warehouse"), description="Warehouse folder: lake/, "
                       "warehouse.duckdb, reports/.")
    landing: Path = Field(Path("data_samples"), description="Folder the pipeline ingests: "
                          "YYYY-MM-DD/ folders and loose files.")
    workers: int | None = Field(None, ge=1, le=64, description="Parallel parser processes "
                                "(default: the machine's cores, at most 8).")
    tools: Path | None = Field(None, description="Tool registry (tools.json or tools.yaml) "
                               "that every run's tool calls are checked against.")
    model_aliases: Path | None = Field(None, description="Model alias table (YAML) extending "
                                       "the shipped transforms/data/model_aliases.yaml: its "
                                       "aliases win, its patterns are tried first.")
    prices: Path | None = Field(None, description="Price table (YAML) extending the shipped "
                                "transforms/data/model_prices.yaml: its models replace those "
                                "of the same name.")
    max_quarantine_share: float = Field(0.05, ge=0, le=1, description="Check: largest share of "
                                        "a day's lines that may be quarantined.")
    max_contract_violation_rate: float = Field(0.10, ge=0, le=1, description="Check: largest "
                                               "share of a day's runs with an error-severity "
                                               "contract finding.")
    max_truncation_rate: float = Field(0.10, ge=0, le=1, description="Check: largest share of "
                                       "a day's runs with a truncation finding.")
    retention_hours: float = Field(2.0, ge=0, description="How long files replaced in the "
                                   "lake stay on disk for queries that started before "
                                   "(vacuum); longer than your longest query.")
    webhook_url: str | None = Field(None, description="URL that receives a JSON summary (POST) "
                                    "when a nightly report finds a regression or missing test "
                                    "cases (`runlake report`, the nightly_report asset).")
    freshness_hours: float = Field(36.0, gt=0, description="Check: the newest day with runs "
                                   "must be at most this many hours old.")


def load() -> Settings:
    """The settings from the environment; a bad value raises an InputError naming each
    variable that holds one (`RUNLAKE_WORKERS='-x': Input should be a valid integer, ...`)."""
    try:
        return Settings()
    except ValidationError as e:
        said: dict[str, str] = {}
        for error in e.errors():
            field = str(error["loc"][0]) if error["loc"] else ""
            name = f"{Settings.model_config.get('env_prefix', '')}{field}".upper()
            said.setdefault(name, f"{name}={str(error.get('input'))[:60]!r}: {error['msg']}")
        raise InputError("; ".join(said.values())) from None
