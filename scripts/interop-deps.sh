#!/usr/bin/env bash
# Builds the reference oracles of internal/interop (interop/: Apache
# Ranger's policy engine, Apache Hive's mask UDFs and Spark 3.5 for the
# masks of Kyuubi's Ranger plugin, see docs/testing.md,
# "The reference oracles") and fetches Keycloak's distribution for the
# token tests (internal/testkeycloak): installs a JDK and Maven with
# apt-get when they are missing, then runs Maven offline when ~/.m2 already
# holds every artifact and online otherwise. A cold ~/.m2 downloads about
# 405 MB for the oracles (226 MB of them Spark's) and 165 MB for
# Keycloak; keep ~/.m2 between runs. INTEROP_RANGER_VERSIONS="2.6.0 2.9.0" also builds the
# oracle against other Ranger releases (default: 2.6.0 only).
set -euo pipefail
cd "$(dirname "$0")/../interop"

missing=()
command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
      echo "interop-deps: missing ${missing[*]} and no root or sudo to install them" >&2
      exit 1
    fi
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "interop-deps: missing ${missing[*]} and no apt-get; install a JDK 17 and Maven 3" >&2
    exit 1
  fi
  echo "interop-deps: installing ${missing[*]}"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

build() {
  # $@: extra Maven arguments. Offline first: a warm ~/.m2 needs no network.
  if mvn -B -q -o package "$@" >/dev/null 2>&1; then
    return 0
  fi
  echo "interop-deps: fetching from Maven Central for: mvn package $*"
  mvn -B -q package "$@"
}

start=$(date +%s)
versions=${INTEROP_RANGER_VERSIONS:-2.6.0}
build
for v in $versions; do
  [ "$v" = 2.6.0 ] && continue
  build -pl ranger-oracle -am "-Dranger.version=$v"
done
# Keycloak for e2e/keycloak_test.go (internal/testkeycloak unpacks it from
# ~/.m2 into ~/.cache/pgranger-e2e/keycloak on first use): about 165 MB cold.
keycloak=org.keycloak:keycloak-quarkus-dist:26.5.6:tar.gz
if ! mvn -B -q -o dependency:get "-Dartifact=$keycloak" -Dtransitive=false >/dev/null 2>&1; then
  echo "interop-deps: fetching $keycloak from Maven Central"
  mvn -B -q dependency:get "-Dartifact=$keycloak" -Dtransitive=false
fi
echo "interop-deps: oracles built in $(( $(date +%s) - start ))s (Ranger ${versions// /, }; hive-exec 3.1.3; Spark 3.5.7)"
