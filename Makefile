# Every target sets up (or updates) the local virtual environment it needs.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# The test suite runs one pytest worker per core, each pinned to one thread (unless
# the caller set a count); demo, bench, docs and notebooks run at the user's settings,
# where compiled code uses every core the process may use.
test fuzz: export OMP_NUM_THREADS ?= 1
test fuzz: export OPENBLAS_NUM_THREADS ?= 1
test fuzz: export MKL_NUM_THREADS ?= 1
test fuzz: export NUMBA_NUM_THREADS ?= 1
test fuzz: export FUNCTRACE_NUM_THREADS ?= 1

.PHONY: demo test fuzz bench lint clean venv mpi docs docs-check notebooks

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[test,notebooks,dev]"
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m functrace demo

# functrace.distributed's tests need Open MPI and mpi4py (the mpi extra). Install them
# when missing (Open MPI from Debian's packages, when apt-get is usable); if that fails
# the MPI tests skip and say why, and the next make test tries again.
MPI_STAMP := $(VENV)/.installed-mpi
$(MPI_STAMP): pyproject.toml | $(STAMP)
	@if ! command -v mpirun >/dev/null 2>&1; then \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
	      openmpi-bin libopenmpi-dev) >/dev/null || echo "make: installing Open MPI failed"; \
	  else echo "make: mpirun not found and apt-get not usable: the MPI tests will skip"; fi; \
	fi
	@$(BIN)/python -m pip install -q -e ".[mpi]" || echo "make: pip install .[mpi] failed"
	@if command -v mpirun >/dev/null 2>&1 && $(BIN)/python -c "import mpi4py" 2>/dev/null; \
	then touch $(MPI_STAMP); else echo "make: no MPI: the tests of functrace.distributed skip"; fi

mpi: $(MPI_STAMP)

# One pytest worker per core the process may use (pytest-xdist), each single-threaded.
# The MPI step never fails the build: without MPI its tests skip with the reason.
# Cases marked slow_compile (many seconds of Numba compiling each) run in make fuzz.
# Idle workers take queued tests from busy ones (worksteal: no long tail on one worker),
# and the slowest tests are listed at the end, to watch the 12-minute budget.
test: $(STAMP) $(MPI_STAMP)
	$(BIN)/python -m pytest -n auto --dist worksteal --durations=25 -m "not slow_compile" \
	  --nbmake tests $(wildcard notebooks)

# The long profile: FUZZ_SECONDS of fresh random programs from the composition fuzzer
# (default 20 min), then every slow property test (marked long_profile, tests/profiles.py)
# again with many more fresh examples than make test draws, then the cases make test
# leaves out because they compile for many seconds (marked slow_compile, tests/op_db.py).
FUZZ_SECONDS ?= 1200
fuzz: $(STAMP)
	FUNCTRACE_FUZZ_SECONDS=$(FUZZ_SECONDS) $(BIN)/python -m pytest -s tests/test_composition_fuzz.py
	HYPOTHESIS_PROFILE=long $(BIN)/python -m pytest -n auto -m long_profile tests
	$(BIN)/python -m pytest -n auto -m slow_compile tests

# The benchmarks compare with JAX and PyTorch (the bench extra), each when importable.
BENCH_STAMP := $(VENV)/.installed-bench
$(BENCH_STAMP): pyproject.toml | $(STAMP)
	$(BIN)/python -m pip install -q -e ".[test,notebooks,dev,bench]"
	touch $(BENCH_STAMP)

bench: $(STAMP) $(BENCH_STAMP)
	for f in bench/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

# The documentation site (docs/README.md): Sphinx + myst-nb, every notebook executed
# (results cached by content in docs/_build/.jupyter_cache), any warning fails the build.
DOCS_STAMP := $(VENV)/.installed-docs
$(DOCS_STAMP): pyproject.toml | $(STAMP)
	$(BIN)/python -m pip install -q -e ".[test,notebooks,dev,docs]"
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(BIN)/python -m sphinx -b html -W --keep-going -E -q docs docs/_build/html
	@echo "make docs: open docs/_build/html/index.html"

# Builds the site, then checks it: executed outputs and figures on every notebook page,
# every image file, an API entry for every public name, and screenshots of the front
# page and chapter 08 in headless Chromium (Debian's chromium, installed when missing).
docs-check: docs
	@if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium) \
	      >/dev/null || echo "make: installing chromium failed"; \
	  else echo "make: chromium not found and apt-get not usable"; fi; \
	fi
	$(BIN)/python docs/check_site.py docs/_build/html

# JupyterLab on the tutorials, from the venv (the notebooks extra installs it); it runs
# until stopped (Ctrl-C). JUPYTER_ARGS passes options (e.g. --no-browser --port=8889);
# as root JupyterLab needs --allow-root, which is added.
JUPYTER_ARGS ?=
notebooks: $(STAMP)
	@$(BIN)/python -c "import jupyterlab" 2>/dev/null || $(BIN)/python -m pip install -q -e ".[notebooks]"
	$(BIN)/python -m jupyter lab notebooks/ $(if $(filter 0,$(shell id -u)),--allow-root) $(JUPYTER_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check src tests bench docs
	$(BIN)/ruff format --check src tests bench docs
	$(BIN)/mypy src

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis docs/_build
