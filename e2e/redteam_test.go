package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestRedTeamExamples runs one example of each class of attack a red
// team found as a governed user (bob: vault.accounts filtered to region
// US, ids 1 and 3 visible, 2 and 4 hidden; card masked, note denied) and
// asserts what bob sees now: the rows of the visible data with no error
// where the example used to raise one because of a hidden row, or the
// refusal, exact.
func TestRedTeamExamples(t *testing.T) {
	t.Parallel()
	p := startProxy(t, proxyOptions{policies: attackPolicies(t).bytes(t)})
	ctx := context.Background()
	var notices []string
	cfg, err := pgx.ParseConfig(p.dsn("bob", "bob"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n.Message) }
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	examples := []struct {
		class, sql string
		want       []string // rows, when no error is expected
		code, msg  string   // the refusal: SQLSTATE and a part of its message
	}{
		// 1. Leakproof comparisons deciding whether an initplan runs.
		{class: "1 initplan", sql: "SELECT count(*) FROM vault.accounts WHERE owner > 'HIDDEN' AND owner < 'HIDDEN Z' AND id <> (SELECT (1/(pg_catalog.count(*) - pg_catalog.count(*)))::int FROM pg_catalog.pg_class)",
			want: []string{"0"}},
		{class: "1 initplan, EXISTS", sql: "SELECT count(*) FROM vault.accounts WHERE id = 2 AND EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE 1/(c.relnatts - c.relnatts) = 1)",
			want: []string{"0"}},
		// 2. Column-free stable functions and casts evaluated per row.
		{class: "2 current_setting", sql: "SELECT count(*) FROM vault.accounts WHERE CASE WHEN id = 2 THEN pg_catalog.current_setting('no.such') = 'x' ELSE false END",
			want: []string{"0"}},
		{class: "2 has_table_privilege", sql: "SELECT count(*) FROM vault.accounts WHERE CASE WHEN id = 2 THEN pg_catalog.has_table_privilege('no_such', 'vault.accounts', 'select') ELSE false END",
			want: []string{"0"}},
		{class: "2 to_date", sql: "SELECT count(*) FROM vault.accounts WHERE id = 2 AND (pg_catalog.to_date('x', 'YYYY') IS NOT NULL OR id < 0)",
			want: []string{"0"}},
		{class: "2 LOCALTIMESTAMP", sql: "SELECT count(*) FROM vault.accounts WHERE id = 2 AND (LOCALTIMESTAMP::text::int > 0 OR id < 0)",
			want: []string{"0"}},
		{class: "2 pg_backend_pid", sql: "SELECT count(*) FROM vault.accounts WHERE id = 2 AND 1/(pg_catalog.pg_backend_pid() - pg_catalog.pg_backend_pid()) = id",
			want: []string{"0"}},
		{class: "2 notice", sql: "SELECT count(*) FROM vault.accounts WHERE id = 2 AND (pg_catalog.plainto_tsquery('the') IS NULL OR id > 0)",
			want: []string{"0"}},
		// 3. A same-type cast with a type modifier.
		{class: "3 numeric(4,0)", sql: "SELECT count(*) FROM vault.accounts WHERE balance::numeric(4,0) > 0",
			want: []string{"2"}},
		// 4. Settings that print plans and statements to the log.
		{class: "4 client_min_messages", sql: "SET client_min_messages = log", code: "42501", msg: "setting client_min_messages"},
		{class: "4 debug_print_plan", sql: "SET debug_print_plan = on", code: "42501", msg: "setting debug_print_plan cannot be changed through pgranger"},
		{class: "4 pg_dump's set_config form", sql: "SELECT pg_catalog.set_config(name, 'on', false) FROM pg_catalog.pg_settings WHERE name = 'debug_print_plan'", code: "42501", msg: "debug_print_plan"},
		{class: "4 trace_sort", sql: "SET trace_sort = on", code: "42501", msg: "setting trace_sort cannot be changed through pgranger"},
		{class: "4 planner settings", sql: "SET enable_seqscan = off", code: "42501", msg: "setting enable_seqscan cannot be changed through pgranger"},
		// 5. Tuple-level introspection.
		{class: "5 currtid2", sql: "SELECT pg_catalog.currtid2('vault.accounts', '(0,1)'::tid)", code: "42501", msg: "function currtid2 is not allowed through pgranger"},
		// 6. Statements that crashed the proxy.
		{class: "6 + chain", sql: "SELECT abs(1)" + strings.Repeat(" + 1", 4800), code: "54001", msg: "levels"},
		{class: "6 OPERATOR chain", sql: "SELECT 1" + strings.Repeat(" OPERATOR(pg_catalog.+) 1", 30000), code: "54001", msg: "levels"},
		{class: "6 CROSS JOINs", sql: "SELECT 1 FROM pg_catalog.pg_am a0" + strings.Repeat(" CROSS JOIN pg_catalog.pg_am", 30000), code: "54001", msg: "levels"},
		{class: "6 UNION ALL", sql: "SELECT 1" + strings.Repeat(" UNION ALL SELECT 1", 50000), code: "54001", msg: "levels"},
		// 7. Wrong results.
		{class: "7 EXECUTE argument", sql: "PREPARE rt(text) AS SELECT id FROM vault.accounts WHERE owner = $1; EXECUTE rt(owner)", code: "42703", msg: `column "owner" does not exist`},
	}
	for _, e := range examples {
		notices = nil
		res, err := conn.PgConn().Exec(ctx, e.sql).ReadAll()
		var got []string
		for _, r := range res {
			for _, row := range r.Rows {
				got = append(got, string(bytes.Join(row, []byte("|"))))
			}
		}
		switch {
		case e.code != "":
			if sqlstate(err) != e.code || err == nil || !strings.Contains(err.Error(), e.msg) {
				t.Errorf("%s: got %v, want %s %q", e.class, err, e.code, e.msg)
			}
		case err != nil:
			t.Errorf("%s: %v", e.class, err)
		default:
			equalLines(t, e.class, got, e.want)
		}
		if len(notices) > 0 {
			t.Errorf("%s: notices reached bob: %q", e.class, notices)
		}
		_, _ = conn.PgConn().Exec(ctx, "DEALLOCATE ALL").ReadAll()
	}
	// 7. COPY of a partitioned table returns its rows: vault.ledger's
	// visible row, memo masked.
	var buf bytes.Buffer
	if _, err := conn.PgConn().CopyTo(ctx, &buf, "COPY vault.ledger TO STDOUT"); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if _, err := conn.PgConn().CopyTo(ctx, &want, "COPY (SELECT * FROM vault.ledger) TO STDOUT"); err != nil {
		t.Fatal(err)
	}
	if buf.String() != want.String() || strings.Count(buf.String(), "\n") != 1 {
		t.Errorf("COPY vault.ledger TO STDOUT: %q, COPY (SELECT …): %q", buf.String(), want.String())
	}
	// The proxy is still serving: nothing above killed it.
	equalLines(t, "after the crashers", rows(t, conn, "SELECT id FROM vault.accounts ORDER BY id"), []string{"1", "3"})
}
