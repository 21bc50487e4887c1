# Every target sets up (or updates) the local virtual environment it needs.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

export OMP_NUM_THREADS ?= 1
export OPENBLAS_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1
export NUMBA_NUM_THREADS ?= 1

.PHONY: demo test fuzz bench lint clean venv

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[test,notebooks,dev]"
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m functrace demo

# One pytest worker per core the process may use (pytest-xdist), each single-threaded.
test: $(STAMP)
	$(BIN)/python -m pytest -n auto --nbmake tests $(wildcard notebooks)

# The long profile: FUZZ_SECONDS of fresh random programs from the composition fuzzer
# (default 20 min), then every slow property test (marked long_profile, tests/profiles.py)
# again with many more fresh examples than make test draws.
FUZZ_SECONDS ?= 1200
fuzz: $(STAMP)
	FUNCTRACE_FUZZ_SECONDS=$(FUZZ_SECONDS) $(BIN)/python -m pytest -s tests/test_composition_fuzz.py
	HYPOTHESIS_PROFILE=long $(BIN)/python -m pytest -n auto -m long_profile tests

bench: $(STAMP)
	for f in bench/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy src

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
