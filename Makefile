# Set-up from nothing: apt packages, a virtual environment, pinned Python packages.
SHELL := /bin/bash
# The interpreter .venv is made from: Debian's own python3.11 where it is installed.  Its executable is built with
# profile-guided optimization and linked statically, where a plain source build (pyenv's, python.org's configure without
# --enable-optimizations) loads libpython as a shared library built without it: a bulk cycle spent 9-15% less CPU on
# Debian's, an idle cycle 16% less time (docs/performance.md, 2026-12-01, afternoon).  PYTHON=... picks another; a .venv
# made from another interpreter than PYTHON is made again (venv-interpreter).
PYTHON ?= $(or $(wildcard /usr/bin/python3.11),python3.11)
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.cdcflow-installed
# make test's workers (pytest-xdist), a test file each at a time; TEST_WORKERS=0 runs the suite in one process
TEST_WORKERS ?= 2
export AIRFLOW__CORE__LOAD_EXAMPLES := False

.PHONY: setup system-packages venv-interpreter class-archive compiled bytecode test demo bench random-workload dag-test airflow-bootstrap airflow docs docs-reference clean

setup: system-packages venv-interpreter $(STAMP) class-archive compiled bytecode

# A .venv made from another interpreter than PYTHON (an older checkout's, or PYTHON=... given) is removed, so that the
# set-up makes it again from PYTHON: packages and compiled modules are the interpreter's own.
venv-interpreter: system-packages
	@if [ -x $(PY) ] && [ "$$($(PY) -c 'import sys; print(sys.base_prefix)')" != \
	    "$$($(PYTHON) -c 'import sys; print(sys.base_prefix)')" ]; then \
	  echo "$(VENV) was made from another interpreter than $(PYTHON): making it again"; rm -rf $(VENV); \
	fi

# The short-lived JVMs' class archive (cdcflow/spark/class_archive.py, built by class_archive_build.py): built once per Java
# and pyspark install; without it JVMs start as before, only slower.
class-archive: $(STAMP)
	@$(PY) -m cdcflow.spark.class_archive_build || echo "(continuing without a class archive)"

system-packages:
	@if { ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; } \
	    || ! command -v mariadb-binlog >/dev/null 2>&1; then \
	  echo "installing mariadb-server"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server mariadb-client >/dev/null; \
	fi
	@if ! command -v chromium >/dev/null 2>&1; then \
	  echo "installing chromium (the browser test of the changefeeds page)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi
	@if ! command -v mydumper >/dev/null 2>&1; then \
	  echo "installing mydumper (the snapshot part of make bench)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mydumper >/dev/null; \
	fi
	@if ! command -v pt-online-schema-change >/dev/null 2>&1; then \
	  echo "installing percona-toolkit (pt-online-schema-change for the online schema change tests, pt-table-sync for the snapshot part of make bench)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq percona-toolkit >/dev/null; \
	fi
	@if [ ! -f /usr/share/mysql/mysql-test/std_data/mdev35643_mysql_80_binlog.000001 ]; then \
	  echo "installing mariadb-test (the MySQL 8.0 and MariaDB 10.3 binlog files tests/source reads)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-test >/dev/null; \
	fi
	@if ! command -v sysbench >/dev/null 2>&1; then \
	  echo "installing sysbench (its oltp_read_write load in the lag part of make bench)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sysbench >/dev/null; \
	fi
	@if ! command -v java >/dev/null 2>&1; then \
	  echo "installing a Java runtime for Spark"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null; \
	fi
	@if [ "$(PYTHON)" = /usr/bin/python3.11 ] && { ! /usr/bin/python3.11 -c "import ensurepip" 2>/dev/null \
	    || [ ! -f /usr/include/python3.11/Python.h ]; }; then \
	  echo "installing python3.11-venv and python3.11-dev (.venv and the compiled modules on Debian's python3.11)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3.11-venv python3.11-dev >/dev/null; \
	fi

# The compiled modules (cdcflow/core/build_extensions.py: pull's binlog reader, the writers' SQL literals), built in
# place with the pinned Cython; without one its Python reference runs, slower, and the cycle's log says so once.
compiled: $(STAMP)
	@$(PIP) install -q -c constraints.txt Cython && $(PY) -m cdcflow.core.build_extensions >/dev/null \
	  || echo "(continuing without a compiled module: its Python reference runs)"

# The checkout's own modules compiled to bytecode, as an installed package has them: where the environment
# says PYTHONDONTWRITEBYTECODE=1 no process writes them, and every `cdcflow` process compiled its ~170 modules
# from source, 0.2-0.3 s of each CLI cycle's start (docs/performance.md).  A module edited since reads its source.
bytecode: $(STAMP)
	@$(PY) -m compileall -q include plugins dags jobs >/dev/null

# Runtime packages (requirements.txt) and the tests' and benchmarks' (requirements-test.txt),
# resolved together.  The Spark provider requires pyspark-client (Spark Connect only, 4.2.0),
# whose ~700 modules are files of the full pyspark 4.3.0 too (same `pyspark` folder); pip
# installs both without noticing, so when pyspark-client is unpacked last, 4.2.0 Python code
# sits beside 4.3.0's jars.  Reinstalling pyspark last (no dependencies) writes its own files
# back, and the version check after it fails the set-up if it did not.
$(STAMP): requirements.txt requirements-test.txt constraints.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip wheel
	$(PIP) install -q -c constraints.txt -r requirements.txt -r requirements-test.txt
	$(PIP) install -q --no-deps --force-reinstall -c constraints.txt pyspark
	$(PIP) install -q --no-deps -e .
	$(PY) -c "import pyspark, sys; sys.exit(pyspark.__version__ != '4.3.0')"
	touch $(STAMP)

# make test [ENGINE=auto|local|spark]: the whole suite (each changefeed's own engine unless ENGINE forces one), then,
# without ENGINE, the end-to-end tests again with the engine forced to Spark, so that every row step is tried in both
# places it can run (the stage's process and Spark tasks).  All of them but these: the tests of where a cycle's rows
# run and what it starts and loads (each sets its changefeed's engine, or runs on Spark anyway), and the window of
# 2,000 DDLs (a Spark job for each of its segments: 3 minutes forced to Spark; its rows go through the same steps as
# every other window's).
ENGINE ?=
SPARK_ENGINE_OWN := $(addprefix tests/e2e/,test_spark_connect.py test_spark_cluster.py test_cli_process.py \
  test_cycle_start_up.py test_engine_places.py test_ddl_window.py)
SPARK_ROW_TESTS := $(filter-out $(SPARK_ENGINE_OWN),$(sort $(wildcard tests/e2e/test_*.py)))
PYTEST := $(VENV)/bin/pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile --durations=30
test: setup
	$(PYTEST) $(if $(ENGINE),--engine $(ENGINE))
	$(if $(ENGINE),,$(PYTEST) --engine spark $(SPARK_ROW_TESTS))

demo: setup
	$(PY) -m cdcflow_devtools.demo

# make bench [PARTS=replication,scaling,pull,pairs,overlap,launchers,snapshot,feeds,large_txn,lag,tables,join] [ROWS=300000]
#            [SCALE=10000,100000,1000000|none] [LAUNCHERS=10000,100000|none] [PULL=<ranges>] [SHAPE=oltp|bulk]
#            [SNAPSHOT=2000000,10000000] [THREADS=4] [LARGE_TXN=1000000,5000000] [LAG_RATES=1000,5000] [LAG_SECONDS=120]
#            [LAG_SCHEDULES=@binlog,@continuous,@continuous+follow60] [LAG_CLI=0] [LAG_SYSBENCH=1]
#            [TABLES=100,1000,10000] [JOIN=1000000] [CATCHUP=300000,2500000] [CATCHUP_SHAPES=oltp,bulk]
#            [CATCHUP_ENGINES=auto,local,spark,spark-connect] [CATCHUP_BINLOG_BYTES=<max_binlog_size>]
#            [CLUSTER=2500000|none] [PAIRS=5] [OVERLAP=4] [APART=3]
# The snapshot, lag, tables, join, pairs and overlap parts run when PARTS names them or SNAPSHOT= / LAG_RATES= / TABLES= /
# JOIN= / PAIRS= / OVERLAP= is given;
# the snapshot part runs once per SNAPSHOT size;
# the feeds part (20 changefeeds on one airflow standalone: DAG parse, the Changefeeds page, cycles on one
# Spark Connect server), large_txn and catchup (catch-ups on engine auto and forced to Spark, and on a standalone
# clusters of one and two workers at CLUSTER rows) when PARTS names them.
bench: setup
	$(PY) -m cdcflow_devtools.bench $(if $(PARTS),--parts $(PARTS)) $(if $(ROWS),--rows $(ROWS)) \
	  $(if $(SCALE),--scale $(SCALE)) $(if $(LAUNCHERS),--launchers $(LAUNCHERS)) $(if $(SHAPE),--shape $(SHAPE)) \
	  $(if $(PULL),--pull $(PULL)) $(if $(PAIRS),--pairs $(PAIRS)) $(if $(OVERLAP),--overlap $(OVERLAP)) $(if $(APART),--apart $(APART)) $(if $(SNAPSHOT),--snapshot $(SNAPSHOT)) \
	  $(if $(THREADS),--snapshot-threads $(THREADS)) $(if $(LARGE_TXN),--large-txn $(LARGE_TXN)) \
	  $(if $(LAG_RATES),--lag-rates $(LAG_RATES)) $(if $(LAG_SECONDS),--lag-seconds $(LAG_SECONDS)) \
	  $(if $(LAG_SCHEDULES),--lag-schedules $(LAG_SCHEDULES)) $(if $(filter 0,$(LAG_CLI)),--no-lag-cli) \
	  $(if $(filter 1,$(LAG_SYSBENCH)),--lag-sysbench) \
	  $(if $(TABLES),--tables $(TABLES)) $(if $(JOIN),--join $(JOIN)) $(if $(CATCHUP),--catchup $(CATCHUP)) \
	  $(if $(CATCHUP_SHAPES),--catchup-shapes $(CATCHUP_SHAPES)) $(if $(CLUSTER),--catchup-cluster $(CLUSTER)) \
	  $(if $(CATCHUP_ENGINES),--catchup-engines $(CATCHUP_ENGINES)) \
	  $(if $(CATCHUP_BINLOG_BYTES),--catchup-binlog-bytes $(CATCHUP_BINLOG_BYTES))

# The seeded random workload with SEEDS more seeds, drawn at random (make test runs three fixed ones):
# make random-workload [SEEDS=20]; a failing seed is printed and CDCFLOW_RANDOM_SEED=<seed> replays it.
random-workload: setup
	CDCFLOW_RANDOM_SEEDS=$(or $(SEEDS),20) $(VENV)/bin/pytest -q -p no:cacheprovider tests/e2e/test_random_workload.py

# Run one cycle of a changefeed through Airflow: make dag-test CF=<changefeed id>
dag-test: setup
	@test -n "$(CF)" || (echo "usage: make dag-test CF=<changefeed id>"; exit 2)
	$(PY) -m cdcflow_devtools.airflow_local dags-test $(CF)

airflow-bootstrap: setup
	$(PY) -m cdcflow_devtools.airflow_local bootstrap

# A local Airflow (standalone, 127.0.0.1:$(AIRFLOW_PORT)) with the demo changefeed and a Spark Connect
# server (127.0.0.1:$(SPARK_PORT)); Ctrl-C stops every process it started within seconds.
AIRFLOW_PORT ?= 8080
SPARK_PORT ?= 15002
airflow: setup
	$(PY) -m cdcflow_devtools.airflow_local standalone --port $(AIRFLOW_PORT) --spark-port $(SPARK_PORT)

# The docs site (mkdocs.yml): the reference pages regenerated from the code, then the whole site built
# from docs/ into .local/site/ in strict mode; open .local/site/index.html (no server, no network).
# Material's banner about its successor is silenced: it says nothing about this site.
docs: docs-reference
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# docs/reference/*.md from the code (the CLI's parser, the config keys, the error codes, the states,
# the environment variables, the trigger form): tests/docs/test_reference.py fails when they differ
docs-reference: setup
	$(PY) -m cdcflow_devtools.docs_reference

clean:
	rm -rf .local build *.egg-info
