"""The price table's format (`transforms/data/model_prices.yaml`, a user's RUNLAKE_PRICES file):
providers, their models, and each model's price, either one price in force on every day or a
list of periods, each in force from its `from` day until the next one's. Validated with
pydantic; a file that breaks the format raises an InputError of one line naming the file and
the model (transforms.contracts.models reads the YAML and merges the files)."""

import re
from dataclasses import dataclass
from datetime import date, datetime
from itertools import pairwise
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    RootModel,
    ValidationError,
    model_validator,
)
from pydantic_core import ErrorDetails

from transforms.errors import InputError


@dataclass(frozen=True)
class Price:
    """One row of the `model_prices` table: a model's rates in force from `price_from` (None:
    on every day) until its next period's `price_from`."""

    model: str
    input_usd_per_mtok: float
    cached_input_usd_per_mtok: float | None
    output_usd_per_mtok: float
    read_on: str
    """ISO date the prices were read."""
    source_url: str
    origin: str
    price_from: str | None = None
    """ISO date from which the rates are in force; None: a single price, in force on every
    day."""


def _iso_date(value: Any) -> Any:
    """A YYYY-MM-DD date (the YAML is read with its dates as text: see models._read_yaml)."""
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d\d-\d\d", value.strip()):
        return date.fromisoformat(value.strip())
    raise ValueError("not a date")


IsoDate = Annotated[date, BeforeValidator(_iso_date)]
MAX_RATE_USD_PER_MTOK = 10_000.0
"""The largest rate a price table may give, in USD per million tokens: a larger one is a typo
or a unit mistake (1.0e+308 made every run's cost infinite), refused like a span's price above
10,000 USD."""
Rate = Annotated[float, Field(ge=0, le=MAX_RATE_USD_PER_MTOK, allow_inf_nan=False,
                              strict=True)]
Text = Annotated[str, Field(min_length=1, strict=True)]

RATES = ("input", "cached_input", "output")
DATES = ("from", "read_on")
PERIOD_KEYS = "from, input, cached_input, output, read_on, source"


class Period(BaseModel):
    """A model's rates (USD per million tokens), in force from `from` (absent: every day)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    from_: IsoDate | None = Field(default=None, alias="from")
    input: Rate
    cached_input: Rate | None = None
    output: Rate
    read_on: IsoDate | None = None
    """The day the prices were read; else the provider's."""
    source: Text | None = None
    """Where the prices come from; else the provider's."""


class Periods(RootModel[list[Period]]):
    """A model's prices over time: at least one period, each with its `from`, in order."""

    @model_validator(mode="after")
    def _in_order(self) -> "Periods":
        if not self.root:
            raise ValueError("the list of periods is empty")
        for i, p in enumerate(self.root, 1):
            if p.from_ is None:
                raise ValueError(f"period {i}: from (YYYY-MM-DD, the first day of its prices) "
                                 "is missing")
        for a, b in pairwise(self.root):
            assert a.from_ is not None and b.from_ is not None
            if b.from_ == a.from_:
                raise ValueError(f"two periods start on {a.from_.isoformat()}")
            if b.from_ < a.from_:
                raise ValueError(f"the periods are not in order of from: "
                                 f"{b.from_.isoformat()} follows {a.from_.isoformat()}")
        return self


class Provider(BaseModel):
    model_config = ConfigDict(extra="forbid")
    source: Text | None = None
    read_on: IsoDate | None = None
    models: dict[str, Any] | None = None


class PriceFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    providers: dict[str, Provider] | None = None


def _first(e: ValidationError) -> ErrorDetails:
    """The error to report: an unknown key first (a misspelt key also makes its key missing)."""
    errors = e.errors()
    return next((x for x in errors if x["type"] == "extra_forbidden"), errors[0])


def _say(error: ErrorDetails) -> str:
    """One pydantic error as a phrase: `period 2: input must be a number ...`."""
    loc = list(error["loc"])
    where = ""
    if loc and isinstance(loc[0], int):
        where, loc = f"period {loc[0] + 1}: ", loc[1:]
    key = str(loc[-1]) if loc else ""
    kind = error["type"]
    if "[key]" in loc:
        return "model names are text"
    if kind == "extra_forbidden":
        return f"{where}unknown key {key!r}"
    if kind == "missing":
        return f"{where}{key} is missing"
    if key in RATES:
        return (f"{where}{key} must be a number of USD per million tokens, from 0 to "
                f"{MAX_RATE_USD_PER_MTOK:,.0f}")
    if key in DATES:
        return f"{where}{key} must be a date (YYYY-MM-DD)"
    if key == "source":
        return f"{where}source must be text: where the prices come from"
    if kind == "value_error" and not loc:
        return f"{where}{error.get('ctx', {}).get('error', error['msg'])}"
    if kind in ("list_type", "model_type") and not loc:
        return ("expected {input, cached_input, output} or a list of periods "
                "[{from, input, cached_input, output}, ...]")
    return f"{where}{key + ': ' if key else ''}{error['msg']}"


def _periods(path: Path, model: str, entry: Any) -> list[Period]:
    try:
        if isinstance(entry, list):
            return Periods.model_validate(entry).root
        return [Period.model_validate(entry)]
    except ValidationError as e:
        raise InputError(f"{path}: model {model!r}: {_say(_first(e))}") from None


def parse(path: Path, doc: dict[str, Any]) -> list[Price]:
    """The prices of one price table (`doc`, read from `path`), each model's in order of `from`;
    an InputError says what is wrong, in which file and for which model."""
    try:
        table = PriceFile.model_validate(doc)
    except ValidationError as e:
        error = _first(e)
        loc = error["loc"]
        if loc[:1] == ("providers",) and len(loc) >= 2:
            raise InputError(f"{path}: provider {loc[1]!r}: {_say({**error, 'loc': loc[2:]})}"
                             if len(loc) > 2 else f"{path}: provider {loc[1]!r}: expected "
                             "{source, read_on, models: {MODEL: {input, cached_input, "
                             "output}}}") from None
        if error["type"] == "extra_forbidden":
            raise InputError(f"{path}: unknown key {loc[-1]!r} (expected providers)") from None
        raise InputError(f"{path}: providers maps a provider name to {{source, read_on, "
                         "models}") from None
    out: list[Price] = []
    seen: set[str] = set()
    for name, prov in (table.providers or {}).items():
        for model, entry in (prov.models or {}).items():
            if not model:
                raise InputError(f"{path}: provider {name!r}: a model without a name")
            if model in seen:
                raise InputError(f"{path}: model {model!r} is priced twice")
            seen.add(model)
            for p in _periods(path, model, entry):
                read_on = p.read_on or prov.read_on
                if read_on is None:
                    raise InputError(f"{path}: model {model!r}: read_on (YYYY-MM-DD, the day "
                                     "the prices were read) is missing")
                source = (p.source or prov.source or "").strip()
                if not source:
                    raise InputError(f"{path}: model {model!r}: source (where the prices come "
                                     "from, e.g. the provider's pricing page) is missing")
                out.append(Price(model, p.input, p.cached_input, p.output, read_on.isoformat(),
                                 source, str(path),
                                 p.from_.isoformat() if p.from_ is not None else None))
    return out
