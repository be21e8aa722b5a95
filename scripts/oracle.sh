#!/usr/bin/env bash
# Starts one reference oracle by hand, reading JSON lines on stdin:
#   scripts/oracle.sh ranger [VERSION]   Apache Ranger's engine (default 2.6.0)
#   scripts/oracle.sh hive               Apache Hive's mask UDFs
# Build first with `make interop-deps` (INTEROP_RANGER_VERSIONS="2.6.0 2.9.0"
# for another Ranger). The protocol is in docs/testing.md.
set -euo pipefail
dir="$(cd "$(dirname "$0")/../interop" && pwd)"
case "${1:-}" in
  ranger)
    target="$dir/ranger-oracle/target/ranger-${2:-2.6.0}"
    jar="$target/ranger-oracle-1.jar" main=org.pgranger.interop.ranger.RangerOracle ;;
  hive)
    target="$dir/hive-oracle/target"
    jar="$target/hive-oracle-1.jar" main=org.pgranger.interop.hive.HiveMaskOracle ;;
  *)
    echo "usage: $0 ranger [VERSION] | hive" >&2
    exit 2 ;;
esac
if [ ! -f "$jar" ] || [ ! -f "$target/classpath.txt" ]; then
  echo "oracle: $jar is not built; run make interop-deps (INTEROP_RANGER_VERSIONS=\"2.6.0 ${2:-}\" for another Ranger)" >&2
  exit 1
fi
exec java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dpolyglot.engine.WarnInterpreterOnly=false \
  -cp "$jar:$(cat "$target/classpath.txt")" "$main"
