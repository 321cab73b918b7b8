#!/usr/bin/env bash
# Mutation testing of the modules that turn measurements into numbers and words (issue 45).
# Not part of CI (minutes to an hour per module on two cores). Needs mutmut 3 in the running
# environment:   python -m pip install "mutmut>=3.8,<4"
#
#   tools/mutation.sh                    stats bench memory bandwidth agreement
#   tools/mutation.sh claims voice       any modules of src/tokgen that have a test list below
#   SAMPLE=300 tools/mutation.sh display  300 of its mutants, drawn at random (seed 0)
#
# Each module is mutated alone, in a copy of the repository under build/mutation/<module>/
# (so mutmut's mutants/ folder and caches never land in the checkout), against the test files
# listed below for it (those that exist). Prints one line per module: mutants killed of those
# run (a timeout counts as killed), and writes the surviving mutants with their diffs to
# build/mutation/<module>/survivors.txt.
# Environment: PYTHON (default: python), JOBS (mutmut's --max-children, default 2), SAMPLE (run only
# that many mutants: a score within a few percent for a module of thousands).
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
    claims) echo tests/test_claims.py tests/test_claim_criteria.py tests/test_properties.py ;;
    display) echo tests/test_display.py tests/test_stats.py ;;
    gaps) echo tests/test_display.py tests/test_claim_criteria.py ;;
    regimes) echo tests/test_claims.py tests/test_properties.py ;;
    voice) echo tests/test_voice.py tests/test_properties.py tests/test_claims.py tests/test_display.py tests/test_stats.py ;;
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
  # data/ and slice/ (mutmut's also_copy): test_stats reads the recorded rounds of every table (tokgen_tools.seqsim)
  for part in src tests pyproject.toml README.md data slice; do [ -e "$part" ] && cp -r "$part" "$work"/; done
  # mutmut reads [tool.mutmut] from pyproject.toml before setup.cfg: keep the copy's pyproject free of it
  "$PY" - "$work" "$module" "${tests[@]}" <<'EOF'
import sys
from pathlib import Path

work, module, tests = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
lines = "\n    ".join
copy = [p for p in ("data", "slice") if (work / p).exists()]  # the tests run in mutants/: copied there too
(work / "setup.cfg").write_text(
    "[mutmut]\n"
    "source_paths = src\n"
    + (f"also_copy =\n    {lines(copy)}\n" if copy else "")
    + f"only_mutate = src/tokgen/{module}.py\n"
    f"pytest_add_cli_args_test_selection =\n    {lines(tests)}\n"
    "pytest_add_cli_args =\n    -p\n    no:cacheprovider\n    -m\n    not slow and not gpu\n"
)
EOF
  names=()
  if [ -n "${SAMPLE:-}" ]; then
    # a name that matches nothing: mutmut writes the mutants and collects the tests' coverage, then stops
    (cd "$work" && env -u PYTHONPATH "$PY" -m mutmut run "tokgen.$module.x_none__mutmut_0" >generate.log 2>&1) || true
    mapfile -t names < <("$PY" - "$work/mutants/src/tokgen/$module.py.meta" "$SAMPLE" <<'EOF'
import json
import random
import sys

names = sorted(json.load(open(sys.argv[1]))["exit_code_by_key"])  # every mutant of the module, methods too
print("\n".join(sorted(random.Random(0).sample(names, min(int(sys.argv[2]), len(names))))))
EOF
    )
  fi
  (cd "$work" && env -u PYTHONPATH "$PY" -m mutmut run --max-children "$JOBS" "${names[@]}" >run.log 2>&1) || true
  "$PY" - "$work" "$module" <<'EOF'
import collections
import json
import sys
from pathlib import Path

work, module = Path(sys.argv[1]), sys.argv[2]
meta = work / "mutants" / "src" / "tokgen" / f"{module}.py.meta"
if not meta.exists():
    sys.exit(f"{module}: mutmut gave no results; see {work / 'run.log'}")
codes = json.loads(meta.read_text())["exit_code_by_key"]
status = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped", 36: "timeout",
          24: "timeout", -24: "timeout", 152: "timeout", 255: "timeout", 37: "caught by type check", None: "not run"}
count = collections.Counter(status.get(code, "suspicious") for code in codes.values())
run = sum(count.values()) - count["not run"]
killed = count["killed"] + count["timeout"]  # a mutant that hangs the tests is caught too
rest = ", ".join(f"{k} {v}" for k, v in count.items() if k not in ("killed", "timeout", "not run") and v)
score = f"{100 * killed / run:.1f}%" if run else "n/a"
sampled = f" (a sample of the module's {len(codes)})" if count["not run"] else ""
print(f"{module}: {killed}/{run} killed{sampled} ({score}; {count['timeout']} of them by a timeout); {rest or 'none left'}")
EOF
  # the mutants that survived, or found no test, with their diffs
  (cd "$work" && env -u PYTHONPATH "$PY" -m mutmut results 2>/dev/null | awk '$2 != "not" {print $1}' | tr -d : |
    while read -r name; do
      [ -n "$name" ] && env -u PYTHONPATH "$PY" -m mutmut show "$name" 2>/dev/null && echo
    done) >"$work/survivors.txt" || true
done
