#!/usr/bin/env bash
# Installs what `make demo` and `make test` need when it is missing:
# PostgreSQL's server binaries and psql (Debian packages), and the Go
# modules. It never starts, stops or changes a PostgreSQL cluster.
set -euo pipefail

need_pkgs=()
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1 && [ -z "${PGRANGER_PG_BINDIR:-}" ]; then
  need_pkgs+=(postgresql)
fi
command -v psql >/dev/null 2>&1 || need_pkgs+=(postgresql-client)
command -v runuser >/dev/null 2>&1 || need_pkgs+=(util-linux)

if [ ${#need_pkgs[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-deps: missing ${need_pkgs[*]} and no apt-get to install them; install PostgreSQL (server and client) and retry" >&2
    exit 1
  fi
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "ensure-deps: need root (or sudo) to install ${need_pkgs[*]}" >&2; exit 1; }
    SUDO=sudo
  fi
  echo "ensure-deps: installing ${need_pkgs[*]}"
  # Install the server without Debian's default cluster: the tests and the
  # demo start their own throwaway clusters and must not leave one running.
  $SUDO mkdir -p /etc/postgresql-common
  if [ ! -f /etc/postgresql-common/createcluster.conf ]; then
    echo "create_main_cluster = false" | $SUDO tee /etc/postgresql-common/createcluster.conf >/dev/null
  fi
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o Dpkg::Options::=--force-confold "${need_pkgs[@]}"
fi

if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
  echo "ensure-deps: running as root needs an OS user 'postgres' to own throwaway clusters (initdb refuses root)" >&2
  exit 1
fi

go mod download
