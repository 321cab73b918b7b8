#!/usr/bin/env bash
# Regenerate every notebook, CSV and figure:   ./run_all.sh            (needs a CUDA GPU)
# The same, tiny and on the CPU:               ./run_all.sh --smoke
# Run the test suite instead:                  ./run_all.sh --test [pytest args]
# This GPU against the reference, in minutes:  ./run_all.sh --quick [--out DIR] [--memory-gb N]
# More: ./run_all.sh --help. Without a suitable active environment this first builds .venv
# (torch first, $TOKGEN_TORCH, default torch==2.13.0; then this package and its dependencies).
set -euo pipefail
CALLER_CWD=$PWD  # --out and --newest-transformers are relative to where run_all.sh was called from
cd "$(dirname "$0")"

# found, not imported: --help and argument mistakes answer in about a second
suitable() {
  "$1" -c "import importlib.util as u, sys; sys.exit(any(u.find_spec(m) is None for m in
    ('torch', 'transformers', 'papermill', 'jupytext', 'pytest', 'tokgen', 'tokgen_tools')))" >/dev/null 2>&1
}

find_python() {
  local candidates=()
  [ -n "${VIRTUAL_ENV:-}${CONDA_PREFIX:-}" ] && candidates+=(python)
  candidates+=(.venv/bin/python python3)
  for py in "${candidates[@]}"; do
    if command -v "$py" >/dev/null 2>&1 && suitable "$py"; then echo "$py"; return; fi
  done
  echo "run_all: no environment with tokgen found; building .venv (one time, a few minutes)" >&2
  [ -x .venv/bin/python ] || python3 -m venv .venv >&2
  .venv/bin/python -m pip install -q --upgrade pip >&2
  .venv/bin/python -m pip install -q "${TOKGEN_TORCH:-torch==2.13.0}" >&2
  local extras=dev
  command -v nvidia-smi >/dev/null 2>&1 && extras=dev,gpu  # cuda-python: notebook 10's WHILE node
  .venv/bin/python -m pip install -q -e ".[$extras]" >&2
  echo .venv/bin/python
}

PY=$(find_python)
if [ "${1:-}" = "--test" ]; then
  shift
  "$PY" -m ruff check .
  # two workers where pytest-xdist is installed (the dev extra; CI has two cores), each test file in one
  # worker: the notebooks' smoke runs read each other's CSVs in order. TOKGEN_TEST_WORKERS=0: one process.
  workers=()
  "$PY" -c "import xdist" >/dev/null 2>&1 && workers=(-n "${TOKGEN_TEST_WORKERS:-2}" --dist loadfile)
  exec "$PY" -m pytest "${workers[@]}" "$@"
fi
if [ "${1:-}" = "--quick" ]; then
  shift
  TOKGEN_CALLER_CWD=$CALLER_CWD exec "$PY" -m tokgen_tools.quick "$@"
fi
TOKGEN_CALLER_CWD=$CALLER_CWD exec "$PY" -m tokgen_tools.runner "$@"
