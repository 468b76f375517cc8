# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

DATA_DIR ?= ./data
BROKERS ?= 3
HOST ?= 127.0.0.1
PORT ?= 9092

.PHONY: run engine test venv bench clean

venv: $(STAMP)

$(STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

run: venv
	$(PY) -m console.localenv
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0
	DATA_DIR=$(DATA_DIR) $(PY) -m console.stack

engine: venv
	$(PY) -m engine serve --data-dir $(DATA_DIR) --brokers $(BROKERS) --host $(HOST) --port $(PORT)

test: venv
	$(PY) -m pytest

bench: venv
	$(PY) benchmarks/produce_consume.py

clean:
	rm -rf $(VENV) $(DATA_DIR)
