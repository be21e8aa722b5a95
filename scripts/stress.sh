#!/usr/bin/env bash
# Runs one test again and again while the tests of other packages keep the
# machine busy, and stops at its first failure: for failures that show only
# under load. The idle-sessions hang (a session's first statement never
# answered, one login in a few hundred) failed 2 runs in 3 this way and
# never in 7 runs on a quiet machine.
#
#   scripts/stress.sh [-n RUNS] [-p PACKAGE] TEST_REGEX
#
# Defaults: 10 runs of ./e2e/. Each run's output is kept in a temporary
# directory, which is printed; a failing run's output is shown.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
runs=10 pkg=./e2e/
while getopts "n:p:" opt; do
  case $opt in
    n) runs=$OPTARG ;;
    p) pkg=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "usage: $0 [-n RUNS] [-p PACKAGE] TEST_REGEX" >&2; exit 2; }
out=$(mktemp -d)
echo "outputs in $out"
stop="$out/stop"
# The load: other packages' tests, again and again, until the runs end.
# At the end it finishes the round under way rather than being killed, so
# the PostgreSQL clusters those tests start are stopped by the tests.
( while [ ! -e "$stop" ]; do "$GO" test -count=1 ./sqlrewrite/ ./catalog/ ./pgwire/ >/dev/null 2>&1; done ) &
load=$!
trap 'touch "$stop"; echo "waiting for the load round under way to finish"; wait $load' EXIT
for i in $(seq 1 "$runs"); do
  echo "run $i of $runs ($(date +%T))"
  if ! "$GO" test -count=1 -timeout 15m -run "$1" "$pkg" >"$out/run-$i.out" 2>&1; then
    echo "run $i FAILED:"
    tail -n 60 "$out/run-$i.out"
    exit 1
  fi
done
echo "all $runs runs passed"
