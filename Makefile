# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

DATA_DIR ?= ./data
SECURE ?=
BROKERS ?= 3
HOST ?= 127.0.0.1
PORT ?= 9092
# pytest processes for `make test` (files are kept whole on one process: --dist loadfile). Four on
# two cores: tests also wait on the processes they start, and a fourth keeps the cores busier
# (docs/contributing/testing.md).
TEST_WORKERS ?= 4

JS_CLIENTS := tests/clients/kafkajs
JS_STAMP := $(JS_CLIENTS)/node_modules/.package-lock.json
# mermaid.js for the docs site's diagrams (docs/hooks/mermaid.py), from npm's registry.
DOCS_JS := docs/hooks
DOCS_JS_STAMP := $(DOCS_JS)/node_modules/.package-lock.json

# System tools, as CHECK=DEBIAN_PACKAGE (CHECK: a command on PATH, an absolute path, or
# ensurepip for Python's venv support). `make test` and `make run` install what is missing
# when they run as root with apt-get, and otherwise stop first and print the command to run.
# Add a tool here when a test or the stack starts to need one.
RUN_DEPS := ensurepip=python3-venv java=openjdk-17-jre-headless
# postgresql and redis-server: the scale-out tests start a private Postgres cluster (initdb,
# pg_ctl) and a Redis with a password (tests/console/test_postgres.py, test_redis_password.py).
# keytool: the TLS tests make PKCS12 and JKS stores as operators do (tests/support/keytool.py).
TEST_DEPS := $(RUN_DEPS) kcat=kcat /usr/bin/chromium=chromium node=nodejs npm=npm promtool=prometheus \
	/usr/lib/postgresql/15/bin/pg_ctl=postgresql /usr/bin/redis-server=redis-server keytool=openjdk-17-jre-headless

.PHONY: run engine test venv js-clients docs-js bench docs clean system-deps run-deps

venv: $(STAMP)

$(STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

# kafkajs for the client tests (npm's registry); node and npm are system tools (TEST_DEPS).
js-clients: $(JS_STAMP)

$(JS_STAMP): $(JS_CLIENTS)/package.json $(JS_CLIENTS)/package-lock.json
	cd $(JS_CLIENTS) && npm ci --no-audit --no-fund --loglevel=error

docs-js: $(DOCS_JS_STAMP)

$(DOCS_JS_STAMP): $(DOCS_JS)/package.json $(DOCS_JS)/package-lock.json
	cd $(DOCS_JS) && npm ci --no-audit --no-fund --loglevel=error

system-deps:
	@PYTHON=$(PYTHON) sh scripts/system_deps.sh test $(TEST_DEPS)

run-deps:
	@PYTHON=$(PYTHON) sh scripts/system_deps.sh run $(RUN_DEPS)

run: run-deps venv
	$(PY) -m console.localenv
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0
	DATA_DIR=$(DATA_DIR) SECURE=$(SECURE) $(PY) -m console.stack

engine: venv
	$(PY) -m engine serve --data-dir $(DATA_DIR) --brokers $(BROKERS) --host $(HOST) --port $(PORT)

# The suite starts hundreds of Python processes (engines, tools, workers, consoles): compiled once
# here, they load bytecode even where PYTHONDONTWRITEBYTECODE keeps each from writing its own.
# pytest is let write its rewritten test modules, which each of its processes would otherwise
# rewrite again (collection takes 15 s of CPU without them, 5 s with).
test: system-deps venv js-clients docs-js
	$(PY) -m compileall -q -j 0 engine console kafka_rules tests
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# The docs site from docs/ into artifacts/site; --strict fails on a broken link or a missing page.
docs: venv docs-js
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

bench: venv
	$(PY) benchmarks/produce_consume.py

clean:
	rm -rf $(VENV) $(DATA_DIR)
