# simulo_envs: `make demo` and `make test` set everything up from nothing, then run.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.simulo-installed
# The CPU build of torch (a local wheel on our CPU machines); a CUDA machine takes pip's default build.
TORCH_CPU := torch==2.13.0

.PHONY: setup lerobot-setup test-lerobot demo test bench clean

# LeRobot 0.6 needs Python >= 3.12 and torch < 2.12, so it lives in a venv of its own
# (docs/lerobot.md): Python 3.12 (pyenv's 3.12.1 here; elsewhere any python3.12 on PATH, or
# LEROBOT_PYTHON=/path/to/python3.12), LeRobot with the extras its commands need here (dataset;
# training: accelerate for lerobot-train; async: gRPC for the async inference robot client and
# policy server; feetech: the SO arms' servo driver, for a real leader arm), torch 2.11 from the
# package index (a CUDA build that also runs on a CPU), this package and the LeRobot plugins
# (integrations/) editable.
LEROBOT_PYTHON ?= python3.12
LEROBOT_PYENV  ?= 3.12.1
LEROBOT_VENV   := .venv-lerobot
LEROBOT_BIN    := $(LEROBOT_VENV)/bin
LEROBOT_STAMP  := $(LEROBOT_VENV)/.simulo-installed
LEROBOT_PINS   := 'lerobot[dataset,training,async,feetech]==0.6.1' 'torch==2.11.*'
LEROBOT_PLUGINS := integrations/lerobot_env_simulo integrations/lerobot_robot_simulo integrations/lerobot_teleoperator_simulo

setup: $(STAMP)

# pip installs without compiling every installed module's bytecode (--no-compile); the check below
# imports torch and simulo_envs with bytecode writing on, and the tests write what else they import
# (TEST_ENV). Measured on a 2-core machine (load 2-5): pip's torch and dev-extras installs took 30.5 + 64.7 s
# of CPU compiling all 16,000 modules, 8.3 + 29.5 s without; the check then costs 3.5 s more and a
# worker's first collection 10 s more (it compiles the ~3,000 other modules it imports). torch is
# installed in the same pip call as this package (one resolve).
$(STAMP): pyproject.toml Makefile scripts/setup_vulkan.sh
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install -q --upgrade pip > $(VENV)/setup.log 2>&1 || (cat $(VENV)/setup.log; exit 1)
	@if $(BIN)/python -c "import torch" 2>/dev/null; then \
		echo "[setup] torch already installed"; torch=; \
	elif command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then \
		echo "[setup] CUDA GPU found: installing torch"; torch=torch; \
	else \
		echo "[setup] no CUDA GPU: installing $(TORCH_CPU) (CPU build)"; torch="$(TORCH_CPU)"; \
	fi; \
	echo "[setup] installing simulo-envs with its dev extras (log: $(VENV)/setup.log)"; \
	$(BIN)/pip install -q --no-compile $$torch -e '.[dev]' >> $(VENV)/setup.log 2>&1 || (cat $(VENV)/setup.log; exit 1)
	@env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -c "import torch, simulo_envs; print('[setup] torch', torch.__version__, '+ simulo_envs ready')" \
		|| (echo "[setup] simulo_envs failed to install" >&2; exit 1)
	@bash scripts/setup_vulkan.sh $(BIN)/python
	@touch $(STAMP)

lerobot-setup: $(LEROBOT_STAMP)

$(LEROBOT_STAMP): pyproject.toml Makefile $(addsuffix /pyproject.toml,$(LEROBOT_PLUGINS))
	@test -x $(LEROBOT_BIN)/python || PYENV_VERSION=$(LEROBOT_PYENV) $(LEROBOT_PYTHON) -m venv $(LEROBOT_VENV) \
		|| (echo "[lerobot-setup] LeRobot 0.6 needs Python 3.12: put python3.12 on PATH or set LEROBOT_PYTHON" >&2; \
		    echo "[lerobot-setup] (make test-main runs the main test suite alone, without the LeRobot venv)" >&2; exit 1)
	@echo "[lerobot-setup] installing LeRobot 0.6.1, torch 2.11, simulo-envs and the plugins into $(LEROBOT_VENV) (log: $(LEROBOT_VENV)/setup.log)"
	@$(LEROBOT_BIN)/python -m pip install -q --upgrade pip > $(LEROBOT_VENV)/setup.log 2>&1 || (cat $(LEROBOT_VENV)/setup.log; exit 1)
	@$(LEROBOT_BIN)/pip install -q $(LEROBOT_PINS) -e '.[datasets]' $(addprefix -e ,$(LEROBOT_PLUGINS)) 'pytest>=8' \
		>> $(LEROBOT_VENV)/setup.log 2>&1 || (cat $(LEROBOT_VENV)/setup.log; exit 1)
	@$(LEROBOT_BIN)/python -c "import lerobot, torch, simulo_envs, lerobot_env_simulo, lerobot_robot_simulo, lerobot_teleoperator_simulo; print('[lerobot-setup] lerobot', lerobot.__version__, '+ torch', torch.__version__, '+ simulo_envs ready')" \
		|| (echo "[lerobot-setup] the LeRobot venv failed to install" >&2; exit 1)
	@touch $(LEROBOT_STAMP)

# The test runs write Python's bytecode (__pycache__ folders, ignored by git) even where the
# environment sets PYTHONDONTWRITEBYTECODE: a run starts many Python processes (the parallel workers,
# the LeRobot plugins' run, the scripts and worker processes tests start) that import the same modules,
# and without bytecode each one compiles them again and pytest rewrites every test module's asserts
# again (measured: collecting the suite took 22.8 s of CPU without, 13.7 s with the bytecode written).
TEST_ENV = env -u PYTHONDONTWRITEBYTECODE

# The LeRobot plugins' own tests, against LeRobot's real classes, in the LeRobot venv, in one pytest
# run (each run is a Python start that imports LeRobot: seconds of CPU). They hold no doctests: the run
# leaves out --doctest-modules (addopts), which imports each folder's conftest.py as the module
# `conftest`, a name two folders cannot share in one run.
LEROBOT_TESTS = $(TEST_ENV) $(LEROBOT_BIN)/python -m pytest -q -o addopts="-p no:cacheprovider" $(addsuffix /tests,$(LEROBOT_PLUGINS))

test-lerobot: setup lerobot-setup
	$(LEROBOT_TESTS)

demo: setup
	$(BIN)/python scripts/demo.py --policy expert --video videos/FrankaLift-v1.mp4

# The suite on parallel workers (pytest-xdist), one per logical core up to TEST_WORKERS_MAX. Each worker
# takes whole test files, so a module's shared fixtures are built once; the files with long
# end-to-end runs go first (tests/conftest.py). It ends with the slowest tests and the time budget
# (tests/timing_report.py). TEST_WORKERS=0 runs the suite in one process; TEST_ARGS adds pytest
# arguments (test files to run instead of the whole suite, -k ...).
# The LeRobot plugins' tests (one pytest at a time, in their own venv) run beside it, so the cores
# stay busy while either side waits for a command it runs; their output is kept in
# build/test-lerobot.log and printed after the main suite's. TEST_LEROBOT_BESIDE=0 runs them after it.
# Beside also means beside the build of .venv when it is (re)built: pip leaves a core idle while it
# unpacks and writes files, and the plugins' tests need only .venv-lerobot, which is built first, alone
# (both venvs install this package editable from this folder, which writes its metadata here).
TEST_WORKERS       ?= logical
TEST_WORKERS_MAX   ?= 4
TEST_LEROBOT_BESIDE ?= 1
TEST_LEROBOT_LOG   := build/test-lerobot.log
TEST_ARGS          ?=

.PHONY: test-main test-lerobot-logged

test-main: setup
	$(TEST_ENV) $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --maxprocesses $(TEST_WORKERS_MAX) --dist loadfile --no-loadscope-reorder $(TEST_ARGS)

test-lerobot-logged: lerobot-setup
	@mkdir -p $(dir $(TEST_LEROBOT_LOG))
	@echo "[test] the LeRobot plugins' tests run beside the main suite (output: $(TEST_LEROBOT_LOG))"
	@($(LEROBOT_TESTS)) > $(TEST_LEROBOT_LOG) 2>&1 || (echo "[test] the LeRobot plugins' tests failed: $(TEST_LEROBOT_LOG)"; exit 1)

ifeq ($(TEST_LEROBOT_BESIDE),0)
test: setup lerobot-setup
	$(MAKE) --no-print-directory test-main
	$(LEROBOT_TESTS)
else
test:
	@$(MAKE) -s --no-print-directory lerobot-setup
	@$(MAKE) --no-print-directory -j2 test-main test-lerobot-logged; status=$$?; \
		echo "============================ LeRobot plugins' tests ============================"; \
		cat $(TEST_LEROBOT_LOG) 2>/dev/null; exit $$status
endif

bench: setup
	$(BIN)/python scripts/benchmark.py

clean:
	rm -rf $(VENV) $(LEROBOT_VENV) build *.egg-info
