# One command sets up and runs; one command checks it all.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8080
# Rule-based pairs, Debian's Apertium packages named by pair either way round (eng-spa, fra-spa);
# `dragoman models catalogue` lists them all. Neural models to install first, e.g. MODELS="en-es".
PAIRS ?= eng-spa fr-es eng-cat
MODELS ?=
BROWSER_PACKAGES := chromium
# What builds the image with no Docker daemon, and runs it (podman, runc) in its test.
IMAGE_TOOLS := mmdebstrap buildah podman runc

.PHONY: run test lint typecheck pytest apertium debian-install models chromium venv bench bench-quick clean \
	image image-gpu image-tools

# PyTorch first, pinned: a looser requirement lets pip pick the newest CUDA build, gigabytes
# that a CPU-only machine never uses. Elsewhere, for the CPU build, run for example
# make TORCH="torch --index-url https://download.pytorch.org/whl/cpu"
TORCH ?= torch==2.13.0

$(BIN)/dragoman: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet $(TORCH)
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

venv: $(BIN)/dragoman

# Debian's packages, installed only when missing: $(call debian,PACKAGES).
define debian
	@missing=""; for p in $(1); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $$missing; \
	fi
endef

# The package list comes from apt's: read it again once when a pair is not found in it.
apertium: venv
	@pkgs=$$($(BIN)/dragoman models debian-packages $(PAIRS) 2>/dev/null) || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); $$SUDO apt-get update -q >/dev/null; \
		pkgs=$$($(BIN)/dragoman models debian-packages $(PAIRS)); } || exit 1; \
	$(MAKE) --no-print-directory debian-install PACKAGES="apertium apertium-apy $$pkgs"

debian-install:
	$(call debian,$(PACKAGES))

models: venv
ifneq ($(strip $(MODELS)),)
	$(BIN)/dragoman models install $(MODELS)
endif

# The browser tests drive Debian's Chromium (Playwright's own browser download needs a
# network this project does not assume).
chromium:
	$(call debian,$(BROWSER_PACKAGES))

image-tools:
	$(call debian,$(IMAGE_TOOLS))

# The image as an OCI archive, build/dragoman-<version>.oci.tar (its path is the last line),
# built from this tree with no Docker daemon and no Docker Hub (deploy/image/build.sh).
image: image-tools
	deploy/image/build.sh --pairs "$(PAIRS)"

# The same with the neural engines and PyTorch's CUDA libraries: build/dragoman-<version>-gpu.oci.tar.
image-gpu: image-tools
	TORCH="$(TORCH)" deploy/image/build.sh --gpu --pairs "$(PAIRS)"

run: apertium venv models
	$(BIN)/dragoman serve --host $(HOST) --port $(PORT)

lint: venv
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: venv
	$(BIN)/mypy src

# Three at a time (most tests wait on processes, pipes and sockets), then alone the few that
# restart a shared service, time a stop, or need the CPU to themselves (marked serial).
PYTEST_WORKERS ?= 3
pytest: apertium chromium venv
	$(BIN)/pytest -q -n $(PYTEST_WORKERS) -m "not serial"
	$(BIN)/pytest -q -m serial

test: lint typecheck pytest

bench: apertium venv
	$(BIN)/python bench/bulk.py
	$(BIN)/python bench/sync.py
	$(BIN)/python bench/scale.py
	$(BIN)/python bench/autoscale_sim.py --no-sweep
	$(BIN)/python bench/autoscale_sim.py --no-sweep --startup 1.4 2.0 --pair-load 0.5 --name autoscale_sim_process
	$(BIN)/python bench/deadlines_sim.py

# Every main benchmark, small (about 90 s on 2 cores), compared with bench/results/baseline.json;
# timings never fail it. See docs/performance.md.
bench-quick: apertium venv
	$(BIN)/python bench/quick.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache build
