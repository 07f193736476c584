# Two set-up commands: `make run` and `make test`. Both create .venv when missing.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000
PYTEST_ARGS ?= -n auto --durations=30
BENCH_ARGS  ?=

.PHONY: run test bench lint data clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Re-install only when the project's dependencies change.
$(VENV)/.run-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[postgres,redis]'
	@touch $@

$(VENV)/.test-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $@ $(VENV)/.run-installed

$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@ $(VENV)/.test-installed $(VENV)/.run-installed

data: $(VENV)/.run-installed
	$(BIN)/svc data init --if-missing

# The embedded market's candles end in the past: `make run` replays its last three days at 600x
# (a 1h candle every 6 s), so live signals appear within minutes, and the market feed continues the
# market past its end for as long as the service runs. MARKET_REPLAY_SPEED=0 is wall time (the feed
# first catches up from the end of the stored candles to now); MARKET_FEED=binance feeds real candles.
run: data
	MARKET_REPLAY_SPEED=$${MARKET_REPLAY_SPEED:-600} $(BIN)/svc serve --host $(HOST) --port $(PORT)

test: $(VENV)/.test-installed
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(VENV)/.dev-installed
	@command -v wrk >/dev/null || (command -v apt-get >/dev/null && (apt-get install -y -q wrk >/dev/null 2>&1 || (apt-get update -q >/dev/null && apt-get install -y -q wrk >/dev/null))) || echo 'wrk not installed: the wrk API benchmarks will skip'
	$(BIN)/python -m pytest benchmarks -p no:randomly --benchmark-only -s $(BENCH_ARGS)

# The house rules CI checks before the suite: lint, one formatting (ruff format, no exceptions but
# the frozen migrations), types of the typed core ([tool.mypy] files), the import layers.
lint: $(VENV)/.test-installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache .benchmarks
