#!/usr/bin/env bash
# Runs FuzzDeepNesting (sqlrewrite/nesting_test.go) for FUZZTIME (default
# 30s) the way `make test` shows it: one line when it passes, its output
# when it fails. New crashers it finds land in
# sqlrewrite/testdata/fuzz/FuzzDeepNesting, where the unit tests replay them.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
time=${FUZZTIME:-30s}
out=$("$GO" test ./sqlrewrite -run '^$' -fuzz '^FuzzDeepNesting$' -fuzztime "$time" 2>&1)
status=$?
if [ $status -ne 0 ]; then
  printf '%s\n' "$out"
  echo "FAIL fuzz FuzzDeepNesting ($time)"
  exit 1
fi
# The last progress line: statements run, or how far the replay of the
# corpus got when the time ran out before fuzzing began.
execs=$(printf '%s\n' "$out" | grep -o 'execs: [0-9]*' | tail -1 | grep -o '[0-9]*')
if [ -n "$execs" ]; then
  echo "ok   fuzz FuzzDeepNesting ($time, $execs statements)"
else
  baseline=$(printf '%s\n' "$out" | grep -o 'baseline coverage: [0-9]*/[0-9]*' | tail -1 | grep -o '[0-9]*/[0-9]*')
  echo "ok   fuzz FuzzDeepNesting ($time, corpus replayed ${baseline:-?})"
fi
