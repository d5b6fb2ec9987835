# simulo_envs: `make demo` and `make test` set everything up from nothing, then run.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.simulo-installed
# The CPU build of torch (a local wheel on our CPU machines); a CUDA machine takes pip's default build.
TORCH_CPU := torch==2.13.0

.PHONY: setup demo test bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml Makefile scripts/setup_vulkan.sh
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install -q --upgrade pip > $(VENV)/setup.log 2>&1 || (cat $(VENV)/setup.log; exit 1)
	@if $(BIN)/python -c "import torch" 2>/dev/null; then \
		echo "[setup] torch already installed"; \
	elif command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then \
		echo "[setup] CUDA GPU found: installing torch"; \
		$(BIN)/pip install -q torch >> $(VENV)/setup.log 2>&1 || (cat $(VENV)/setup.log; exit 1); \
	else \
		echo "[setup] no CUDA GPU: installing $(TORCH_CPU) (CPU build)"; \
		$(BIN)/pip install -q "$(TORCH_CPU)" >> $(VENV)/setup.log 2>&1 || (cat $(VENV)/setup.log; exit 1); \
	fi
	@echo "[setup] installing simulo-envs with its dev extras (log: $(VENV)/setup.log)"
	@$(BIN)/pip install -q -e '.[dev]' >> $(VENV)/setup.log 2>&1 || (cat $(VENV)/setup.log; exit 1)
	@$(BIN)/python -c "import torch, simulo_envs; print('[setup] torch', torch.__version__, '+ simulo_envs ready')" \
		|| (echo "[setup] simulo_envs failed to install" >&2; exit 1)
	@bash scripts/setup_vulkan.sh $(BIN)/python
	@touch $(STAMP)

demo: setup
	$(BIN)/python scripts/demo.py --policy expert --video videos/FrankaLift-v1.mp4

# The suite on parallel workers (pytest-xdist), one per logical core up to TEST_WORKERS_MAX. Each worker
# takes whole test files, so a module's shared fixtures are built once; the files with long
# end-to-end runs go first (tests/conftest.py). It ends with the slowest tests and the time budget
# (tests/timing_report.py). TEST_WORKERS=0 runs the suite in one process.
TEST_WORKERS     ?= logical
TEST_WORKERS_MAX ?= 4

test: setup
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --maxprocesses $(TEST_WORKERS_MAX) --dist loadfile --no-loadscope-reorder

bench: setup
	$(BIN)/python scripts/benchmark.py

clean:
	rm -rf $(VENV) build *.egg-info
