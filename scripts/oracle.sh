#!/usr/bin/env bash
# Starts one reference oracle by hand, reading JSON lines on stdin:
#   scripts/oracle.sh ranger [VERSION]   Apache Ranger's engine (default 2.6.0)
#   scripts/oracle.sh hive               Apache Hive's mask UDFs
#   scripts/oracle.sh spark              Spark 3.5 (Kyuubi's masks; Ranger's plugin on request)
# Build first with `make interop-deps` (INTEROP_RANGER_VERSIONS="2.6.0 2.9.0"
# for another Ranger). The protocol is in docs/testing.md.
set -euo pipefail
dir="$(cd "$(dirname "$0")/../interop" && pwd)"
extra=()
case "${1:-}" in
  ranger)
    target="$dir/ranger-oracle/target/ranger-${2:-2.6.0}"
    jar="$target/ranger-oracle-1.jar" main=org.pgranger.interop.ranger.RangerOracle ;;
  hive)
    target="$dir/hive-oracle/target"
    jar="$target/hive-oracle-1.jar" main=org.pgranger.interop.hive.HiveMaskOracle ;;
  spark)
    target="$dir/spark-oracle/target"
    jar="$target/spark-oracle-1.jar" main=org.pgranger.interop.spark.SparkOracle
    # Spark 3.5 on Java 17: the modules it reaches into (internal/interop/build.go).
    for m in java.lang java.lang.invoke java.lang.reflect java.io java.net java.nio java.util \
        java.util.concurrent java.util.concurrent.atomic jdk.internal.ref sun.nio.ch sun.nio.cs \
        sun.security.action sun.util.calendar; do
      extra+=("--add-opens=java.base/$m=ALL-UNNAMED")
    done
    extra+=(-Xmx1g -Djdk.reflect.useDirectMethodHandle=false) ;;
  *)
    echo "usage: $0 ranger [VERSION] | hive | spark" >&2
    exit 2 ;;
esac
if [ ! -f "$jar" ] || [ ! -f "$target/classpath.txt" ]; then
  echo "oracle: $jar is not built; run make interop-deps (INTEROP_RANGER_VERSIONS=\"2.6.0 ${2:-}\" for another Ranger)" >&2
  exit 1
fi
exec java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dpolyglot.engine.WarnInterpreterOnly=false "${extra[@]}" \
  -cp "$jar:$(cat "$target/classpath.txt")" "$main"
