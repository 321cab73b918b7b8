#!/usr/bin/env bash
# Mutation testing of the modules that turn measurements into numbers and words (issue 45).
# Not part of CI (minutes to an hour per module on two cores). Needs mutmut 3 in the running
# environment:   python -m pip install "mutmut>=3.8,<4"
#
#   tools/mutation.sh                    stats bench memory bandwidth agreement
#   tools/mutation.sh claims display     any modules of src/tokgen
#
# Each module is mutated alone, in a copy of the repository under build/mutation/<module>/
# (so mutmut's mutants/ folder and caches never land in the checkout), against the test files
# listed below for it (those that exist). Prints one line per module, killed/total, and writes
# the surviving mutants with their diffs to build/mutation/<module>/survivors.txt.
# Environment: PYTHON (default: python), JOBS (mutmut's --max-children, default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python}
JOBS=${JOBS:-2}
# mutmut forks each mutant's test run from a process that has already run torch: with OpenMP's
# thread pool started, the forked children spin until their CPU limit (spurious "timeouts")
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

tests_for() {
  case "$1" in
    stats) echo tests/test_stats.py tests/test_stats_exact.py tests/test_bench.py tests/test_claim_criteria.py ;;
    bench) echo tests/test_bench.py tests/test_harness.py ;;
    memory) echo tests/test_harness.py tests/test_bench.py ;;
    bandwidth) echo tests/test_bandwidth.py tests/test_harness.py tests/test_properties.py ;;
    agreement) echo tests/test_agreement.py tests/test_harness.py tests/test_properties.py ;;
    claims) echo tests/test_claims.py tests/test_claim_criteria.py ;;
    display) echo tests/test_display.py tests/test_stats.py ;;
    *) echo "tools/mutation.sh: no test list for module '$1'" >&2; exit 2 ;;
  esac
}

modules=("$@")
[ ${#modules[@]} -gt 0 ] || modules=(stats bench memory bandwidth agreement)
for module in "${modules[@]}"; do
  [ -f "src/tokgen/$module.py" ] || { echo "tools/mutation.sh: no module src/tokgen/$module.py" >&2; exit 2; }
  tests=()
  for t in $(tests_for "$module"); do [ -f "$t" ] && tests+=("$t"); done
  work=$ROOT/build/mutation/$module
  rm -rf "$work"
  mkdir -p "$work"
  # what the tests read: the package, the tests, the committed notebooks and data some of them open
  cp -r src tests pyproject.toml README.md "$work"/
  # mutmut reads [tool.mutmut] from pyproject.toml before setup.cfg: keep the copy's pyproject free of it
  "$PY" - "$work" "$module" "${tests[@]}" <<'EOF'
import sys
from pathlib import Path

work, module, tests = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
lines = "\n    ".join
(work / "setup.cfg").write_text(
    "[mutmut]\n"
    "source_paths = src\n"
    f"only_mutate = src/tokgen/{module}.py\n"
    f"pytest_add_cli_args_test_selection =\n    {lines(tests)}\n"
    "pytest_add_cli_args =\n    -p\n    no:cacheprovider\n    -m\n    not slow and not gpu\n"
)
EOF
  (cd "$work" && env -u PYTHONPATH "$PY" -m mutmut run --max-children "$JOBS" >run.log 2>&1) || true
  (cd "$work" && env -u PYTHONPATH "$PY" -m mutmut export-cicd-stats >/dev/null 2>&1) || true
  "$PY" - "$work" "$module" <<'EOF'
import json
import sys
from pathlib import Path

work, module = Path(sys.argv[1]), sys.argv[2]
stats_file = work / "mutants" / "mutmut-cicd-stats.json"
if not stats_file.exists():
    sys.exit(f"{module}: mutmut gave no results; see {work / 'run.log'}")
s = json.loads(stats_file.read_text())
total = s.get("total", 0)
timeouts = s.get("timeout", 0)
killed = s.get("killed", 0) + timeouts  # a mutant that hangs the tests is caught too
rest = {k: v for k, v in s.items() if k not in ("total", "killed", "timeout") and v}
score = f"{100 * killed / total:.1f}%" if total else "n/a"
left = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in rest.items()) or "none left"
print(f"{module}: {killed}/{total} killed ({score}; {timeouts} of them by a timeout); {left}")
EOF
  (cd "$work" && env -u PYTHONPATH "$PY" -m mutmut results 2>/dev/null | awk '{print $1}' | tr -d : |
    while read -r name; do
      [ -n "$name" ] && env -u PYTHONPATH "$PY" -m mutmut show "$name" 2>/dev/null && echo
    done) >"$work/survivors.txt" || true
done
