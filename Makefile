# runlake: `make run` builds the warehouse from data_samples/, `make test` runs the suite.
# Needs only Python >= 3.11 and make: uv is installed into .uv/ when it is not on PATH.

PYTHON ?= python3
UV := $(shell command -v uv 2>/dev/null || echo .uv/bin/uv)
VENV := .venv
BIN := $(VENV)/bin
export DAGSTER_HOME ?= $(CURDIR)/.dagster_home
export UV_PYTHON ?= $(shell command -v $(PYTHON))

.PHONY: install run dev test test-fast lint bench samples clean

.uv/bin/uv:
	$(PYTHON) -m pip install --quiet --disable-pip-version-check --target .uv uv

$(BIN)/runlake: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --quiet
	@touch $@

install: $(BIN)/runlake

$(DAGSTER_HOME)/dagster.yaml: pipelines/dagster.yaml
	@mkdir -p $(DAGSTER_HOME)
	cp pipelines/dagster.yaml $@

# The samples' tool registry, unless RUNLAKE_TOOLS names another (run and dev only).
SAMPLE_TOOLS := $(if $(RUNLAKE_TOOLS),$(RUNLAKE_TOOLS),$(CURDIR)/data_samples/tools.yaml)

run: install $(DAGSTER_HOME)/dagster.yaml
	RUNLAKE_TOOLS=$(SAMPLE_TOOLS) $(BIN)/python -m pipelines.materialize

dev: install $(DAGSTER_HOME)/dagster.yaml
	RUNLAKE_TOOLS=$(SAMPLE_TOOLS) $(BIN)/dagster dev -w workspace.yaml -h 127.0.0.1 -p 3000

test: install
	$(BIN)/pytest -n 2

# The suite without the tests marked slow (servers, engines, crash-at-every-stage).
test-fast: install
	$(BIN)/pytest -n 2 -m "not slow"

lint: install
	$(BIN)/ruff check transforms pipelines devtools tests bench data_samples
	$(BIN)/mypy transforms pipelines devtools
	$(BIN)/sqlfluff lint sql

bench: install
	$(BIN)/python bench/ingest.py --mb 200

samples: install
	$(BIN)/python data_samples/generate.py

clean:
	rm -rf warehouse .dagster_home .pytest_cache
