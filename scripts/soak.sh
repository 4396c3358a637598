#!/usr/bin/env bash
# Runs tests many times under CPU load and reports every test that ever failed: the hunt for
# flaky tests (timing, races, signals). Two busy loops share the cores with the tests all
# along, as on a loaded CI machine. Needs a built tree (scripts/test.sh or scripts/setup.sh
# --test first).
#
#   scripts/soak.sh                      5 rounds of the fault and signal tests, 2 of the MPI tests
#   scripts/soak.sh --faults 10 --mpi 3  more rounds
#   scripts/soak.sh --suite 5            the whole suite (ctest) 5 times in a row
#   scripts/soak.sh --build build-mpich  the same against another build tree (its MPI)
#
# Prints, per test that failed at least once, how many of its runs failed; then the totals
# ("soak: N test runs, F failed"). Exit status 1 when any run failed.
set -euo pipefail
cd "$(dirname "$0")/.."

faults=5 mpi=2 suite=0 build=build
while (($#)); do
  case $1 in
    --faults) faults=$2; shift 2 ;;
    --mpi) mpi=$2; shift 2 ;;
    --suite) suite=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "soak.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -f $build/CTestTestfile.cmake ]] || { echo "soak.sh: no built tree in $build (run scripts/test.sh first)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/anabranch-soak.XXXXXX")
busy=()
cleanup() {
  for p in "${busy[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
for _ in 1 2; do
  (while :; do :; done) &
  busy+=($!)
done

# The environment ctest gives the command-line tests (executables, data, MPI settings).
env_of() {
  ctest --test-dir "$build" --show-only=json-v1 | python3 -c '
import json, sys, shlex
tests = {t["name"]: t for t in json.load(sys.stdin)["tests"]}
for p in tests[sys.argv[1]].get("properties", []):
    if p["name"] == "ENVIRONMENT":
        for kv in p["value"]:
            print("export " + shlex.quote(kv))
' "$1"
}

round=0
run_pytest() {  # label, pytest selection...
  local label=$1; shift
  round=$((round + 1))
  (
    eval "$(env_of cli)"
    cd "$build"
    "${PYTHON:-venv/bin/python}" -m pytest -q -p no:cacheprovider --junitxml="$work/r$round.xml" "$@" >"$work/r$round.log" 2>&1
  ) && echo "soak: $label: passed" || echo "soak: $label: FAILED (log kept: $work/r$round.log)"
}

for ((i = 1; i <= faults; i++)); do
  run_pytest "faults and signals, round $i/$faults" ../tests/python/test_faults.py
done
for ((i = 1; i <= mpi; i++)); do
  run_pytest "MPI tests, round $i/$mpi" -m mpi ../tests/python
done
for ((i = 1; i <= suite; i++)); do
  round=$((round + 1))
  if ctest --test-dir "$build" -j 2 --output-junit "$work/r$round.xml" >"$work/r$round.log" 2>&1; then
    echo "soak: whole suite, round $i/$suite: passed"
  else
    echo "soak: whole suite, round $i/$suite: FAILED (log kept: $work/r$round.log)"
  fi
done

trap - EXIT
for p in "${busy[@]}"; do kill "$p" 2>/dev/null || true; done
status=0
python3 - "$work" <<'EOF' || status=$?
import collections, pathlib, sys, xml.etree.ElementTree as ET
runs, failed = collections.Counter(), collections.Counter()
for f in sorted(pathlib.Path(sys.argv[1]).glob("r*.xml")):
    for case in ET.parse(f).iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name')}".lstrip(":")
        if case.find("skipped") is not None:
            continue
        runs[name] += 1
        if case.find("failure") is not None or case.find("error") is not None:
            failed[name] += 1
for name in sorted(failed):
    print(f"soak: {name}: {failed[name]} of {runs[name]} runs failed")
print(f"soak: {sum(runs.values())} test runs ({len(runs)} tests), {sum(failed.values())} failed")
sys.exit(1 if failed else 0)
EOF
if ((status == 0)); then rm -rf "$work"; fi
exit $status
