# Two commands on a fresh machine: `make run` and `make test`.
# Everything else is installed here from PyPI by uv. uv is used from PATH (or
# ~/.local/bin, where its installer puts it); otherwise .ci/bootstrap-uv puts a
# private copy in .tools/bin, which works where python3's pip is externally managed.

SHELL := /bin/bash
.DEFAULT_GOAL := help
TOOLS := $(CURDIR)/.tools
UV_VERSION := 0.13.9
UV ?= $(shell command -v uv 2>/dev/null || { test -x "$(HOME)/.local/bin/uv" && echo "$(HOME)/.local/bin/uv"; } || echo "$(TOOLS)/bin/uv")
RUN := $(UV) run --frozen
SCHEDULERS := kai kueue volcano coscheduling default
CLOUDS := eks gke

.PHONY: help
help: ## List the targets.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

.PHONY: uv
uv: ## Find uv, or install a private copy into .tools/bin.
	@test -x "$(UV)" || command -v "$(UV)" >/dev/null 2>&1 || \
	  TOOLS="$(TOOLS)" UV_VERSION="$(UV_VERSION)" .ci/bootstrap-uv

.PHONY: sync
sync: uv ## Install the workspace and its tools into .venv.
	@$(UV) sync --frozen --quiet

.PHONY: run
run: sync ## Render the example fleet, the serving fleet, one fleet per in-cluster scheduler, the stack example, the model cache example, and the EKS and GKE clusters Modelplane creates.
	$(RUN) modelplane render examples/catalog examples/fleet
	@echo; echo "=== examples/serving"
	$(RUN) modelplane render examples/catalog examples/serving
	@for scheduler in $(SCHEDULERS); do \
	  echo; echo "=== examples/schedulers/$$scheduler"; \
	  $(RUN) modelplane render examples/catalog examples/schedulers/models.yaml examples/schedulers/$$scheduler || exit 1; \
	done
	@echo; echo "=== examples/stack"
	$(RUN) modelplane render examples/catalog examples/schedulers/models.yaml examples/stack
	@echo; echo "=== examples/caching"
	$(RUN) modelplane render examples/catalog examples/caching
	@for cloud in $(CLOUDS); do \
	  echo; echo "=== examples/clusters/$$cloud"; \
	  $(RUN) modelplane render examples/clusters/$$cloud || exit 1; \
	done

.PHONY: render
render: sync ## Render your own fleet: make render ARGS="my-fleet/ -o yaml" > world.yaml (only the output on stdout).
	@$(RUN) modelplane render $(ARGS)

# The static checks run one after another beside pytest (two make jobs): pyright
# and the one-process checks leave part of a core idle, which pytest's workers fill,
# and pytest's last tests leave a core to pyright. Each step's output is printed
# whole when it ends (--output-sync); a failing check fails `make test` once pytest
# has finished.
.PHONY: test
# GNU make 4 prints each job's output whole when it ends (--output-sync); make 3.81
# (macOS's own) has no such option and interleaves the two jobs' lines instead.
OUTPUT_SYNC := $(if $(filter 3.%,$(MAKE_VERSION)),,--output-sync=target)

test: sync ## Lint, type-check, drift-check and test.
	@$(MAKE) --no-print-directory -j2 $(OUTPUT_SYNC) checks pytest

.PHONY: checks
checks: sync ## Lint, type-check and drift-check, one after another.
	$(LINT)
	$(CHECK_GENERATED)
	$(TYPECHECK)

define LINT
$(RUN) ruff format --check .
$(RUN) ruff check .
$(RUN) lint-imports
endef

define CHECK_GENERATED
$(RUN) python schemas/generate.py --check
$(RUN) python cli/package_apis.py --check
endef

TYPECHECK = $(RUN) pyright

.PHONY: lint
lint: sync ## ruff format check, ruff lint, and the import layering contracts.
	$(LINT)

.PHONY: typecheck
typecheck: sync ## pyright, strict.
	$(TYPECHECK)

.PHONY: check-generated
check-generated: sync ## Fail if schemas/python or the CLI's copy of apis/ is stale.
	$(CHECK_GENERATED)

# One worker per core (pytest-xdist); PYTEST_WORKERS=0 runs in one process.
# PYTEST_ARGS narrows the run (paths, -k). MAKEFLAGS is not handed on: the tests
# that run make would find `make test`'s job server named there but not open.
# PYTHONDONTWRITEBYTECODE neither: the root conftest drops it for the workers, and
# without it here the controller, which imports the conftest's modules first, leaves
# them compiled for the workers instead of compiling them only for itself.
# worksteal: the multi-round render scenarios take seconds each, so idle workers
# take queued tests from busy ones rather than wait on a fixed split.
PYTEST_WORKERS ?= auto

.PHONY: pytest
pytest: sync ## The test suite, one worker per core (PYTEST_WORKERS=N to choose).
	env -u MAKEFLAGS -u MFLAGS -u PYTHONDONTWRITEBYTECODE UV=$(UV) $(RUN) pytest -n $(PYTEST_WORKERS) --dist worksteal $(PYTEST_ARGS)

.PHONY: package
package: sync ## Build each function's image (linux/amd64, linux/arm64) and Function xpkg, and the Configuration xpkg, into dist/ (needs docker buildx and the crossplane CLI).
	$(RUN) python -m modelplane_dev.package_command

.PHONY: crds
crds: sync ## Download the pinned upstream CRDs (upstream-crds.yaml) into .crds/; CRDS_MIRROR=dir copies them from a local directory instead.
	$(RUN) python -m modelplane_cli.crds_command $(if $(CRDS_MIRROR),--mirror "$(CRDS_MIRROR)")

.PHONY: generate
generate: sync ## Regenerate the pydantic models and the CLI's copy of apis/.
	$(RUN) python schemas/generate.py
	$(RUN) python cli/package_apis.py

.PHONY: bench
bench: sync ## Benchmark the scheduler, its whole gRPC call (Go-order bytes), its requests' bytes, the control plane's steady state, render, placements (against an exact solver), reading the fleet, and CEL.
	@for n in 10 100 1000; do \
	  $(RUN) modelplane bench schedule --fleet $(BENCH_FLEET) --clusters $$n --replicas 10; \
	done
	$(RUN) modelplane bench schedule --fleet $(BENCH_FLEET) --clusters 10000 --replicas 100
	$(RUN) modelplane bench placement --fleets 350
	$(RUN) modelplane bench placement --shapes scarce --fleets 200
	$(RUN) modelplane bench cel --fleet $(BENCH_FLEET)
	$(RUN) modelplane bench hostile
	$(RUN) modelplane bench parse --fleet $(BENCH_FLEET) --clusters 1000
	$(RUN) modelplane bench call --baseline $(BENCH_BASELINE) --fleet $(BENCH_FLEET) --clusters 1000 --callers 2 --worker-pairs 3
	$(RUN) modelplane bench requirements --fleet $(BENCH_FLEET) --clusters 1000
	$(RUN) modelplane bench call --baseline $(BENCH_BASELINE) --fleet $(BENCH_FLEET) --clusters 10000 --runs 3 --processes 1 --no-compare
	$(RUN) modelplane bench fleet --fleet $(BENCH_FLEET) --clusters 100 --deployments 100
	$(RUN) modelplane bench fleet --fleet $(BENCH_FLEET) --clusters 1000 --deployments 1000 --runs 3
	$(RUN) modelplane bench fleet --fleet $(BENCH_FLEET) --clusters 10000 --deployments 1000 --runs 2
	$(RUN) modelplane bench render --baseline $(BENCH_BASELINE) --fleet $(BENCH_FLEET) --clusters 100 --deployments 50
	$(RUN) modelplane bench render --baseline $(BENCH_BASELINE) --fleet $(BENCH_FLEET) --clusters 300 --deployments 200 --runs 1

BENCH_FLEET ?= $(firstword $(wildcard ../shared/bench/fleet.json) bench/fleet.json)
# The figures docs/performance.md records, printed as "before" beside the new ones.
BENCH_BASELINE ?= bench/baseline.json

.PHONY: fmt
fmt: sync ## Format and autofix.
	$(RUN) ruff format .
	$(RUN) ruff check --fix .
