// Package e2e holds pgranger's end-to-end tests: the built binary between
// real clients (pgx, psql, and as subprocesses JDBC, psycopg2,
// node-postgres, pgbench and pg_dump; docs/clients.md) and a real, throwaway
// PostgreSQL cluster. They need PostgreSQL's server binaries (see
// internal/testpg) and skip with a message when there are none.
package e2e
