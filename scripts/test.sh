#!/usr/bin/env bash
# Runs the tests the way `make test` shows them: `go test -json` read by
# internal/testreport, which prints a line per package as it finishes, the
# output of failing tests, a note every minute naming what still runs, and
# a summary of every skipped test and why. With CI=true a conformance suite
# that skipped because ../shared/ranger is absent fails the run.
# Arguments are passed to go test (default: ./...).
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
mkdir -p bin
"$GO" build -o bin/testreport ./internal/testreport || exit 1
flags=()
case "${CI:-}" in
  true|1|yes) flags+=(-fail-conformance-skips) ;;
esac
[ $# -gt 0 ] || set -- ./...
# -parallel: the end-to-end tests marked t.Parallel mostly wait (timeouts,
# token expiry, a demo's start-up) or run their own cluster, so more of them
# than the default GOMAXPROCS overlap well; TEST_PARALLEL overrides.
"$GO" test -json -count=1 -timeout 20m -parallel "${TEST_PARALLEL:-4}" "$@" 2>&1 | bin/testreport "${flags[@]}"
status=("${PIPESTATUS[@]}")
# go test's own status covers what the report cannot see (it is 1 when any
# package failed to build or run); the report's adds conformance skips.
if [ "${status[0]}" -ne 0 ] || [ "${status[1]}" -ne 0 ]; then
  exit 1
fi
