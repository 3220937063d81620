# Two commands on a fresh machine: `make run` and `make test`.
# Everything else is installed here from PyPI by uv, which pip installs if missing.

SHELL := /bin/bash
.DEFAULT_GOAL := help
UV ?= $(shell command -v uv 2>/dev/null || echo "$(HOME)/.local/bin/uv")
RUN := $(UV) run --frozen
SCHEDULERS := kai kueue volcano coscheduling default

.PHONY: help
help: ## List the targets.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

.PHONY: uv
uv:
	@command -v $(UV) >/dev/null 2>&1 || python3 -m pip install --quiet --user uv

.PHONY: sync
sync: uv ## Install the workspace and its tools into .venv.
	@$(UV) sync --frozen --quiet

.PHONY: run
run: sync ## Render the example fleet, then one fleet per in-cluster scheduler.
	$(RUN) modelplane render examples/catalog examples/fleet
	@for scheduler in $(SCHEDULERS); do \
	  echo; echo "=== examples/schedulers/$$scheduler"; \
	  $(RUN) modelplane render examples/catalog examples/schedulers/models.yaml examples/schedulers/$$scheduler || exit 1; \
	done

.PHONY: test
test: sync lint typecheck check-generated pytest ## Lint, type-check, drift-check and test.

.PHONY: lint
lint: sync ## ruff format check, ruff lint, and the import layering contracts.
	$(RUN) ruff format --check .
	$(RUN) ruff check .
	$(RUN) lint-imports

.PHONY: typecheck
typecheck: sync ## pyright, strict.
	$(RUN) pyright

.PHONY: check-generated
check-generated: sync ## Fail if schemas/python is stale against apis/.
	$(RUN) python schemas/generate.py --check

.PHONY: pytest
pytest: sync ## The test suite.
	UV=$(UV) $(RUN) pytest

.PHONY: generate
generate: sync ## Regenerate the pydantic models from the XRDs.
	$(RUN) python schemas/generate.py

.PHONY: bench
bench: sync ## Benchmark the fleet scheduler and reading the fleet, on the shared bench fleet.
	@for n in 10 100 1000; do \
	  $(RUN) modelplane bench schedule --fleet $(BENCH_FLEET) --clusters $$n --replicas 10; \
	done
	$(RUN) modelplane bench schedule --fleet $(BENCH_FLEET) --clusters 10000 --replicas 100
	$(RUN) modelplane bench parse --fleet $(BENCH_FLEET) --clusters 1000

BENCH_FLEET ?= $(firstword $(wildcard ../shared/bench/fleet.json) bench/fleet.json)

.PHONY: fmt
fmt: sync ## Format and autofix.
	$(RUN) ruff format .
	$(RUN) ruff check --fix .
