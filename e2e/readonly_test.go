package e2e

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Reads need no DDL (docs/security.md "The barrier"): row-filtered tables
// are read through subqueries, so every read works where the backend
// cannot write — a hot standby, a service role whose transactions are
// read-only, a read-only transaction. Each test runs the attack suite's
// reads (masked bytes, filtered rows, denials, oracles) as bob.

// readAttacks are the statements of the attack suite that write nothing
// (their setup and cleanup only open transactions, declare cursors,
// prepare statements or set settings).
func readAttacks() []attack {
	readOnly := func(stmts []string) bool {
		for _, s := range stmts {
			switch strings.ToUpper(strings.Fields(s)[0]) {
			case "BEGIN", "COMMIT", "ROLLBACK", "DECLARE", "PREPARE", "DEALLOCATE", "SET", "RESET":
			default:
				return false
			}
		}
		return true
	}
	var out []attack
	for _, a := range vaultAttacks() {
		if a.check == nil && readOnly(a.setup) && readOnly(a.after) {
			out = append(out, a)
		}
	}
	return out
}

// runReads runs readAttacks through p as bob, in both protocols, after
// the given session setup.
func runReads(t *testing.T, p *proxy, setup ...string) {
	t.Helper()
	var seen capture
	conn := connectCapturing(t, p, "bob", &seen)
	for _, s := range setup {
		rows(t, conn, s, pgx.QueryExecModeSimpleProtocol)
	}
	attacks := readAttacks()
	if len(attacks) < 60 {
		t.Fatalf("only %d read statements in the attack suite", len(attacks))
	}
	runAttacks(t, conn, attacks)
	noSecrets(t, &seen, "xxxx-xxxx-xxxx-1234")
	t.Logf("%d read statements", len(attacks))
}

// TestReadsOnHotStandby points pgranger at a streaming replica of the test
// cluster (pg_basebackup -R, hot_standby = on).
func TestReadsOnHotStandby(t *testing.T) {
	requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	standby, err := cluster.Standby(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(standby.Stop)
	direct, err := pgx.Connect(ctx, standby.SuperDSN("demo"))
	if err != nil {
		t.Fatal(err)
	}
	var inRecovery bool
	if err := direct.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&inRecovery); err != nil || !inRecovery {
		t.Fatalf("the standby is not in recovery (%v, %v)", inRecovery, err)
	}
	direct.Close(ctx)
	p := startProxy(t, proxyOptions{
		policies: attackPolicies(t).bytes(t),
		env:      map[string]string{"PGRANGER_BACKEND__DSN": standby.DSN("pgranger_svc", "pgranger_svc", "demo"), "PGRANGER_POLICY__ALLOW_DDL": "true"},
	})
	runReads(t, p)
}

// TestReadsWithReadOnlyServiceRole: the service role's transactions are
// read-only (ALTER ROLE … SET default_transaction_read_only = on), as
// docs/operations.md recommends for BI traffic.
func TestReadsWithReadOnlyServiceRole(t *testing.T) {
	requireCluster(t)
	ctx := context.Background()
	if err := cluster.Exec(ctx, "demo", `
		CREATE ROLE pgranger_ro LOGIN PASSWORD 'pgranger_ro' IN ROLE pgranger_svc;
		ALTER ROLE pgranger_ro SET default_transaction_read_only = on;`); err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, proxyOptions{
		policies: attackPolicies(t).bytes(t),
		env:      map[string]string{"PGRANGER_BACKEND__DSN": cluster.DSN("pgranger_ro", "pgranger_ro", "demo"), "PGRANGER_POLICY__ALLOW_DDL": "true"},
	})
	conn := connect(t, p, "bob")
	equalLines(t, "the backend session is read-only", rows(t, conn, "SHOW transaction_read_only"), []string{"on"})
	runReads(t, p)
}

// TestReadsInReadOnlyTransactions: a session whose every transaction is
// read-only, and explicit BEGIN READ ONLY blocks.
func TestReadsInReadOnlyTransactions(t *testing.T) {
	p := startProxy(t, proxyOptions{policies: attackPolicies(t).bytes(t), env: map[string]string{"PGRANGER_POLICY__ALLOW_DDL": "true"}})
	runReads(t, p, "SET default_transaction_read_only = on")

	conn := connect(t, p, "bob")
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		rows(t, conn, "BEGIN READ ONLY", pgx.QueryExecModeSimpleProtocol)
		equalLines(t, "masked and filtered", rows(t, conn, "SELECT id, card, pin FROM vault.accounts ORDER BY id", mode),
			[]string{"1|xxxx-xxxx-xxxx-1234|NULL", "3|xxxx-xxxx-xxxx-5678|NULL"})
		equalLines(t, "oracle", rows(t, conn, "SELECT id FROM vault.accounts WHERE 1/balance > 0 ORDER BY id", mode), []string{"1", "3"})
		equalLines(t, "key lookup", rows(t, conn, "SELECT card FROM vault.accounts WHERE id = $1", mode, 3), []string{"xxxx-xxxx-xxxx-5678"})
		rows(t, conn, "COMMIT", pgx.QueryExecModeSimpleProtocol)
	}
}

// TestReadsLogNoDDL: with log_statement = 'ddl' for the service role, the
// attack suite's reads through pgranger make the backend log no statement
// at all — nothing is created, replaced or dropped for a read. A DDL
// statement of the same role, sent directly, shows the log catches DDL.
func TestReadsLogNoDDL(t *testing.T) {
	requireCluster(t)
	ctx := context.Background()
	if err := cluster.Exec(ctx, "demo", `
		CREATE ROLE pgranger_logddl LOGIN PASSWORD 'pgranger_logddl' IN ROLE pgranger_svc;
		ALTER ROLE pgranger_logddl SET log_statement = 'ddl';`); err != nil {
		t.Fatal(err)
	}
	dsn := cluster.DSN("pgranger_logddl", "pgranger_logddl", "demo")
	p := startProxy(t, proxyOptions{
		policies: attackPolicies(t).bytes(t),
		env:      map[string]string{"PGRANGER_BACKEND__DSN": dsn, "PGRANGER_POLICY__ALLOW_DDL": "true"},
	})
	before := len(cluster.Log())
	runReads(t, p)
	direct, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close(ctx)
	const control = "CREATE TEMP TABLE pgranger_log_control (x int)"
	if _, err := direct.Exec(ctx, control); err != nil {
		t.Fatal(err)
	}
	var logged []string
	eventually(t, 10*time.Second, func() string {
		logged = nil
		for _, l := range strings.Split(cluster.Log()[before:], "\n") {
			if strings.Contains(l, "statement: ") {
				logged = append(logged, l[strings.Index(l, "statement: ")+len("statement: "):])
			}
		}
		if len(logged) == 0 || logged[len(logged)-1] != control {
			return "the control statement is not in the server log yet"
		}
		return ""
	})
	equalLines(t, "statements logged with log_statement = 'ddl'", logged, []string{control})
}

// TestUnixSocketBackend: backend.dsn names the server's socket directory
// (host=/path), as a proxy on the database host would; reads, the catalog
// and cancels go over the Unix-domain socket.
func TestUnixSocketBackend(t *testing.T) {
	requireCluster(t)
	dsn := fmt.Sprintf("postgres://pgranger_svc:pgranger_svc@/demo?host=%s&port=%d&sslmode=disable", url.QueryEscape(cluster.Dir), cluster.Port)
	p := startProxy(t, proxyOptions{policies: attackPolicies(t).bytes(t), env: map[string]string{"PGRANGER_BACKEND__DSN": dsn}})
	conn := connect(t, p, "bob")
	equalLines(t, "masked and filtered over the socket", rows(t, conn, "SELECT id, card FROM vault.accounts ORDER BY id"),
		[]string{"1|xxxx-xxxx-xxxx-1234", "3|xxxx-xxxx-xxxx-5678"})
	equalLines(t, "the backend session is on the socket", rows(t, conn, "SELECT inet_server_addr() IS NULL"), []string{"t"})
	timer := time.AfterFunc(300*time.Millisecond, func() { conn.PgConn().CancelRequest(context.Background()) })
	defer timer.Stop()
	start := time.Now()
	if _, err := conn.Exec(context.Background(), "SELECT pg_sleep(20)"); sqlstate(err) != "57014" || time.Since(start) > 10*time.Second {
		t.Fatalf("err = %v after %v, want 57014 query_canceled over the socket", err, time.Since(start))
	}
	equalLines(t, "after a cancel", rows(t, conn, "SELECT count(*) FROM vault.accounts"), []string{"2"})
}
