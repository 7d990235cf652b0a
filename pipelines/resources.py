"""The runlake resource: the one place Dagster gets settings from (RUNLAKE_ environment)."""

from pathlib import Path

import dagster as dg

from transforms.settings import Settings, location


class RunlakeResource(dg.ConfigurableResource):  # type: ignore[misc]
    """Where the warehouse lives and what the pipeline ingests; defaults from RUNLAKE_*."""

    home: str = ""
    landing: str = ""
    workers: int = 0
    tools: str = ""
    model_aliases: str = ""
    prices: str = ""
    deciding_evaluations: str = ""

    def settings(self) -> Settings:
        base = Settings()
        return base.model_copy(update={
            "home": location(self.home) if self.home else base.home,
            "landing": location(self.landing) if self.landing else base.landing,
            "workers": self.workers or base.workers,
            "tools": Path(self.tools) if self.tools else base.tools,
            "model_aliases": Path(self.model_aliases) if self.model_aliases
            else base.model_aliases,
            "prices": Path(self.prices) if self.prices else base.prices,
            "deciding_evaluations": self.deciding_evaluations or base.deciding_evaluations,
        })
