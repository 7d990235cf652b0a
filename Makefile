# runlake: `make run` builds the warehouse from data_samples/, `make test` runs the suite.
# Needs only Python >= 3.11 and make: uv is installed into .uv/ when it is not on PATH.

PYTHON ?= python3
UV := $(shell command -v uv 2>/dev/null || echo .uv/bin/uv)
VENV := .venv
BIN := $(VENV)/bin
export DAGSTER_HOME ?= $(CURDIR)/.dagster_home
export UV_PYTHON ?= $(shell command -v $(PYTHON))

.PHONY: install install-runtime run dev test test-fast lint bench samples clean

.uv/bin/uv:
	$(PYTHON) -m pip install --quiet --disable-pip-version-check --target .uv uv

# Two environments in one .venv: `make run`/`dev` need the runtime dependencies only
# (pyproject's [project] dependencies); `make test`/`lint` add every dependency group (test and
# lint tools, pyspark). A full sync stands for a runtime one too (a runtime sync would
# uninstall the groups).
# Both compile every module's bytecode at install: Python cannot cache it where
# PYTHONDONTWRITEBYTECODE is set or the install is read-only, and then a Dagster run, a
# `runlake` command and each test process would compile all it imports (~2 s) on every start.
$(VENV)/.runtime: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --quiet --compile-bytecode --no-default-groups
	$(BIN)/python -m compileall -q transforms pipelines >/dev/null
	@touch $@

$(VENV)/.full: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --quiet --compile-bytecode --all-groups
	$(BIN)/python -m compileall -q transforms pipelines >/dev/null
	@touch $@ $(VENV)/.runtime

# The runtime dependencies only: what `make run` and `make dev` install.
install-runtime: $(VENV)/.runtime

# The development environment: runtime, test, lint and Spark dependencies.
install: $(VENV)/.full

$(DAGSTER_HOME)/dagster.yaml: pipelines/dagster.yaml
	@mkdir -p $(DAGSTER_HOME)
	cp pipelines/dagster.yaml $@

# The samples' tool registry, unless RUNLAKE_TOOLS names another (run and dev only).
SAMPLE_TOOLS := $(if $(RUNLAKE_TOOLS),$(RUNLAKE_TOOLS),$(CURDIR)/data_samples/tools.yaml)

run: install-runtime $(DAGSTER_HOME)/dagster.yaml
	RUNLAKE_TOOLS=$(SAMPLE_TOOLS) $(BIN)/python -m pipelines.materialize

# `dagster dev` says it is superseded by `dg dev` (the dagster-dg-cli package, which runlake
# does not install): that warning, and only it, is not printed. Ctrl-C, or SIGTERM to make,
# stops it with its webserver and daemon: exec makes it make's own child, and pipelines.dev
# undoes the ignored SIGINT a background start from a script leaves (dagster dev would then
# ignore SIGTERM as well).
DEV_PORT ?= 3000
dev: install-runtime $(DAGSTER_HOME)/dagster.yaml
	PYTHONWARNINGS='ignore:Function `dev_command` is superseded' \
	RUNLAKE_TOOLS=$(SAMPLE_TOOLS) exec $(BIN)/python -m pipelines.dev -w workspace.yaml \
	  -h 127.0.0.1 -p $(DEV_PORT)

test: install
	@$(BIN)/python -m devtools.prerequisites
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

samples: install-runtime
	$(BIN)/python data_samples/generate.py

clean:
	rm -rf warehouse .dagster_home .pytest_cache
