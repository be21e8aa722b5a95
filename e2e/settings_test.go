package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Session settings are an allow list and no LOG or DEBUG message reaches a
// client (docs/security.md "Session settings"). The red team's way past
// the EXPLAIN refusal — client_min_messages = log with debug_print_plan,
// which sends the plan with estimates from statistics of the whole table
// as LOG messages — and its kin are refused, through every door: SET, SET
// LOCAL, set_config (pg_dump's FROM pg_settings form included) and the
// startup packet.

const hintOptIn = "An operator can allow it with policy.allowed-settings."

// settingRefusals are statements a governed user (bob: a row filter on
// sales.orders) sends, with the exact message and hint each gets (42501).
var settingRefusals = []struct{ sql, msg, hint string }{
	{"SET client_min_messages = log", `pgranger: setting client_min_messages cannot be set to 'log' through pgranger (user "bob")`, "Allowed values: info, notice, warning, error."},
	{"SET debug_print_plan = on", `pgranger: setting debug_print_plan cannot be changed through pgranger (user "bob")`, hintOptIn},
	{"SELECT set_config('debug_print_plan', 'on', false)", `pgranger: setting debug_print_plan cannot be changed through pgranger (user "bob")`, hintOptIn},
	{"SELECT set_config(name, 'on', false) FROM pg_settings WHERE name = 'debug_print_plan'", `pgranger: setting debug_print_plan cannot be changed through pgranger (user "bob")`, hintOptIn},
	{"SET enable_seqscan = off", `pgranger: setting enable_seqscan cannot be changed through pgranger (user "bob")`, hintOptIn},
	{"SET cpu_operator_cost = 0", `pgranger: setting cpu_operator_cost cannot be changed through pgranger (user "bob")`, hintOptIn},
	{"SET trace_sort = on", `pgranger: setting trace_sort cannot be changed through pgranger (user "bob")`, hintOptIn},
	{"SET LOCAL debug_print_parse = on", `pgranger: setting debug_print_parse cannot be changed through pgranger (user "bob")`, hintOptIn},
	{"SET client_min_messages = log; SET debug_print_plan = on; EXPLAIN SELECT * FROM sales.orders WHERE amount > 1000",
		`pgranger: setting client_min_messages cannot be set to 'log' through pgranger (user "bob")`, "Allowed values: info, notice, warning, error."},
}

// pgErr is err's server error, or nil.
func pgErr(err error) *pgconn.PgError {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe
	}
	return nil
}

func TestSettingsRefusedWithPgx(t *testing.T) {
	conn := connect(t, demoProxy, "bob")
	for _, r := range settingRefusals {
		modes := []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol}
		if !strings.Contains(r.sql, ";") {
			modes = append(modes, pgx.QueryExecModeExec)
		}
		for _, mode := range modes {
			_, err := tryRows(conn, r.sql, mode)
			pe := pgErr(err)
			if pe == nil || pe.Severity != "ERROR" || pe.Code != "42501" || pe.Message != r.msg || pe.Hint != r.hint {
				t.Errorf("%s (%v): %+v\nwant ERROR 42501 %q hint %q", r.sql, mode, pe, r.msg, r.hint)
			}
		}
	}
	// Nothing changed on the backend session.
	equalLines(t, "backend settings", rows(t, conn,
		"SELECT current_setting('client_min_messages'), current_setting('debug_print_plan'), current_setting('enable_seqscan'), current_setting('trace_sort')",
		pgx.QueryExecModeSimpleProtocol), []string{"notice|off|on|off"})
	// What drivers and pg_dump send still passes.
	for _, sql := range []string{"SET client_min_messages = warning", "SET DateStyle = ISO, DMY", "SET TIME ZONE 'UTC'",
		"SET extra_float_digits = 3", "SET application_name = 'settings test'", "SET statement_timeout = 0",
		"SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY", "SELECT set_config('lock_timeout', '5s', false)",
		"RESET ALL"} {
		if _, err := tryRows(conn, sql, pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Errorf("%s: %v", sql, err)
		}
	}
}

func TestSettingsRefusedWithPsql(t *testing.T) {
	for _, r := range settingRefusals {
		_, stderr, err := psql(t, "bob", "-c", r.sql)
		want := "ERROR:  " + r.msg + "\nHINT:  " + r.hint + "\n"
		if err == nil || stderr != want {
			t.Errorf("psql -c %q: %v\nstderr %q\nwant   %q", r.sql, err, stderr, want)
		}
	}
}

// A startup option is a setting like SET: FATAL 42501 before a backend
// connection is taken. Allowed ones still pass.
func TestStartupOptionRefused(t *testing.T) {
	requireCluster(t)
	cfg, err := pgx.ParseConfig(demoProxy.dsn("bob", "bob"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["options"] = "-c debug_print_plan=on"
	_, err = pgx.ConnectConfig(ctx(t), cfg)
	pe := pgErr(err)
	msg := `pgranger: setting debug_print_plan cannot be changed through pgranger (user "bob")`
	if pe == nil || pe.Severity != "FATAL" || pe.Code != "42501" || pe.Message != msg || pe.Hint != hintOptIn {
		t.Errorf("options -c debug_print_plan=on: %v\nwant FATAL 42501 %q hint %q", err, msg, hintOptIn)
	}

	cfg.RuntimeParams["options"] = "-c client_min_messages=warning -c statement_timeout=5s -c DateStyle=ISO,DMY"
	conn, err := pgx.ConnectConfig(ctx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	equalLines(t, "startup settings", rows(t, conn, "SELECT current_setting('client_min_messages'), current_setting('statement_timeout'), current_setting('DateStyle')",
		pgx.QueryExecModeSimpleProtocol), []string{"warning|5s|ISO, DMY"})

	// psql with PGOPTIONS, as libpq sends it.
	path, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("skipping the psql half: psql not installed")
	}
	cmd := exec.Command(path, "-X", "-A", "-t", "-c", "SELECT 1", demoProxy.dsn("bob", "bob"))
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10", "LC_ALL=C", "PGOPTIONS=-c trace_sort=on")
	out, err := cmd.CombinedOutput()
	wantTail := "FATAL:  pgranger: setting trace_sort cannot be changed through pgranger (user \"bob\")\nHINT:  " + hintOptIn + "\n"
	if err == nil || !strings.HasPrefix(string(out), "psql: error: connection to server at ") || !strings.HasSuffix(string(out), wantTail) {
		t.Errorf("PGOPTIONS=-c trace_sort=on: %v\n%s\nwant it to end with %q", err, out, wantTail)
	}
}

// noticeLog collects the notices a connection receives.
type noticeLog struct {
	mu   sync.Mutex
	seen []string // "SEVERITY: message"
}

func (l *noticeLog) add(_ *pgconn.PgConn, n *pgconn.Notice) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, n.Severity+": "+n.Message)
}

func (l *noticeLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.seen
	l.seen = nil
	return out
}

// connectNoticing connects to dsn, collecting notices in l.
func connectNoticing(t *testing.T, dsn string, l *noticeLog) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.OnNotice = l.add
	conn, err := pgx.ConnectConfig(ctx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// An operator's policy.allowed-settings opens exactly the settings it
// names, and even then no LOG or DEBUG message reaches the client: the
// service role here runs with client_min_messages = debug5 (ALTER ROLE),
// so its backend sends the plan debug_print_plan prints, which a direct
// connection of the same role receives and pgranger's client does not.
func TestOperatorSettingsAndLogNotices(t *testing.T) {
	requireCluster(t)
	if err := cluster.Exec(context.Background(), "demo", `
		CREATE ROLE pgranger_chatty LOGIN PASSWORD 'pgranger_chatty' IN ROLE pgranger_svc;
		ALTER ROLE pgranger_chatty SET client_min_messages = 'debug5';`); err != nil {
		t.Fatal(err)
	}
	dsn := cluster.DSN("pgranger_chatty", "pgranger_chatty", "demo")
	p := startProxy(t, proxyOptions{env: map[string]string{
		"PGRANGER_BACKEND__DSN":             dsn,
		"PGRANGER_POLICY__ALLOWED_SETTINGS": "enable_seqscan,Debug_Print_Plan,myapp.*",
	}})

	// The control: directly, the role's backend sends LOG messages.
	var direct noticeLog
	dc := connectNoticing(t, dsn, &direct)
	rows(t, dc, "SET debug_print_plan = on", pgx.QueryExecModeSimpleProtocol)
	direct.take()
	rows(t, dc, "SELECT id FROM sales.orders WHERE amount > 1000", pgx.QueryExecModeSimpleProtocol)
	if got := direct.take(); !hasSeverity(got, "LOG") {
		t.Fatalf("a direct connection of the role got no LOG message, so the test shows nothing: %q", got)
	}

	var seen noticeLog
	conn := connectNoticing(t, p.dsn("bob", "bob"), &seen)
	simple := pgx.QueryExecModeSimpleProtocol
	for _, sql := range []string{"SET enable_seqscan = off", "SET debug_print_plan = on", "SET myapp.tenant = '42'"} {
		if _, err := tryRows(conn, sql, simple); err != nil {
			t.Errorf("%s, allowed by the operator: %v", sql, err)
		}
	}
	equalLines(t, "operator's settings", rows(t, conn, "SELECT current_setting('enable_seqscan'), current_setting('debug_print_plan'), current_setting('myapp.tenant')", simple),
		[]string{"off|on|42"})
	for sql, msg := range map[string]string{
		"SET enable_hashjoin = off":     `pgranger: setting enable_hashjoin cannot be changed through pgranger (user "bob")`,
		"SET myapplication.tenant = 1":  `pgranger: setting myapplication.tenant cannot be changed through pgranger (user "bob")`,
		"SET client_min_messages = log": `pgranger: setting client_min_messages cannot be set to 'log' through pgranger (user "bob")`,
	} {
		_, err := tryRows(conn, sql, simple)
		if pe := pgErr(err); pe == nil || pe.Code != "42501" || pe.Message != msg {
			t.Errorf("%s: %v, want 42501 %q", sql, err, msg)
		}
	}
	seen.take()
	for _, mode := range []pgx.QueryExecMode{simple, pgx.QueryExecModeCacheStatement} {
		equalLines(t, "rows", rows(t, conn, "SELECT id FROM sales.orders WHERE amount > 1000 ORDER BY id", mode), []string{"1", "3", "5"})
	}
	// A warning still arrives; nothing at LOG or DEBUG does.
	rows(t, conn, "ROLLBACK", simple)
	equalLines(t, "notices through pgranger", seen.take(), []string{"WARNING: there is no transaction in progress"})

	// psql prints no LOG or DEBUG line either.
	path, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("skipping the psql half: psql not installed")
	}
	cmd := exec.Command(path, "-X", "-A", "-t", p.dsn("bob", "bob"), "-c", "SET debug_print_plan = on", "-c", "SELECT count(*) FROM sales.orders")
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10", "LC_ALL=C")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stdout.String() != "SET\n3\n" || stderr.String() != "" {
		t.Errorf("psql: %v\nstdout %q (want \"SET\\n3\\n\")\nstderr %q (want nothing)", err, stdout.String(), stderr.String())
	}
}

func hasSeverity(notices []string, sev string) bool {
	for _, n := range notices {
		if strings.HasPrefix(n, sev+": ") {
			return true
		}
	}
	return false
}
