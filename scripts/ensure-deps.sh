#!/usr/bin/env bash
# Installs what `make demo` and `make test` need when it is missing:
# PostgreSQL's server binaries, psql and pgbench (Debian packages), the real
# clients the end-to-end tests drive (PostgreSQL JDBC and a JDK, psycopg2,
# node and npm for node-postgres, whose `pg` module the tests install
# themselves; see docs/clients.md), and the Go modules. It never starts,
# stops or changes a PostgreSQL cluster.
set -euo pipefail

need_pkgs=()
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1 && [ -z "${TESTPG_BINDIR:-}" ]; then
  need_pkgs+=(postgresql)
fi
command -v psql >/dev/null 2>&1 || need_pkgs+=(postgresql-client)
command -v runuser >/dev/null 2>&1 || need_pkgs+=(util-linux)
# `make bench` (ensure-deps.sh bench) also compares against pgbouncer.
if [ "${1:-}" = bench ]; then
  command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || need_pkgs+=(pgbouncer)
  command -v pgbench >/dev/null 2>&1 || [ -x /usr/lib/postgresql/15/bin/pgbench ] || need_pkgs+=(postgresql-contrib)
fi

# Clients for e2e/clients_test.go: installed where possible; where not,
# those tests skip with a loud message rather than fail the build.
want_pkgs=()
ls /usr/share/java/postgresql.jar >/dev/null 2>&1 || want_pkgs+=(libpostgresql-jdbc-java)
command -v javac >/dev/null 2>&1 || want_pkgs+=(default-jdk-headless)
/usr/bin/python3 -c 'import psycopg2' >/dev/null 2>&1 || want_pkgs+=(python3-psycopg2)
command -v node >/dev/null 2>&1 || want_pkgs+=(nodejs)
command -v npm >/dev/null 2>&1 || want_pkgs+=(npm)

SUDO=""
can_install=yes
if ! command -v apt-get >/dev/null 2>&1; then
  can_install=""
elif [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else can_install=""; fi
fi
apt_updated=""
apt_install() {
  if [ -z "$apt_updated" ]; then
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    apt_updated=yes
  fi
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o Dpkg::Options::=--force-confold "$@"
}

if [ ${#need_pkgs[@]} -gt 0 ]; then
  if [ -z "$can_install" ]; then
    echo "ensure-deps: missing ${need_pkgs[*]} and no apt-get (or no root/sudo) to install them; install PostgreSQL (server and client) and retry" >&2
    exit 1
  fi
  echo "ensure-deps: installing ${need_pkgs[*]}"
  # Install the server without Debian's default cluster: the tests and the
  # demo start their own throwaway clusters and must not leave one running.
  $SUDO mkdir -p /etc/postgresql-common
  if [ ! -f /etc/postgresql-common/createcluster.conf ]; then
    echo "create_main_cluster = false" | $SUDO tee /etc/postgresql-common/createcluster.conf >/dev/null
  fi
  apt_install "${need_pkgs[@]}"
fi

if [ ${#want_pkgs[@]} -gt 0 ]; then
  if [ -n "$can_install" ] && echo "ensure-deps: installing test clients ${want_pkgs[*]}" && apt_install "${want_pkgs[@]}"; then
    :
  else
    echo "ensure-deps: WARNING: could not install ${want_pkgs[*]}; the end-to-end tests of those clients will SKIP" >&2
  fi
fi

if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
  echo "ensure-deps: running as root needs an OS user 'postgres' to own throwaway clusters (initdb refuses root)" >&2
  exit 1
fi

go mod download
