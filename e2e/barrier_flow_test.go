package e2e

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestBarrierControlFlowThroughProxy sends probe/control pairs through
// pgranger as a governed user (docs/security.md "The barrier"): a probe
// puts an effect — an initplan that divides by zero, a stable function
// that fails or raises a notice — behind a trigger that holds on a row
// the user's filter hides and on no row the user sees; its control
// changes the trigger's constant to one no row has. For the user the two
// are the same statement, so they must give the same rows, the same error
// or none and the same notices. The pairs go through the query shapes
// and the ways of sending a statement that a red team used: views, CTEs,
// subqueries, joins, EXISTS, LATERAL, UNION ALL, HAVING, window
// functions, GROUPING SETS, DISTINCT ON, recursive CTEs, a partition read
// directly; the simple and the extended protocol, bind parameters,
// cursors, COPY (query) TO STDOUT, multi-statement strings, savepoints,
// SQL PREPARE/EXECUTE, and unqualified names after pg_dump's set_config
// of search_path.
func TestBarrierControlFlowThroughProxy(t *testing.T) {
	t.Parallel()
	p := startProxy(t, proxyOptions{policies: attackPolicies(t).bytes(t)})
	ctx := context.Background()
	var notices []string
	cfg, err := pgx.ParseConfig(p.dsn("bob", "bob"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n.Severity+" "+n.Message) }
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	// Each happens whenever it is evaluated, whatever the row.
	effects := []string{
		"a.id <> (SELECT (1/(pg_catalog.count(*) - pg_catalog.count(*)))::int FROM pg_catalog.pg_class)",
		"pg_catalog.current_setting('no.such') = 'x'",
		"pg_catalog.plainto_tsquery('the') IS NOT NULL",
		"pg_catalog.to_date('x', 'YYYY') IS NOT NULL",
	}
	forms := []string{"{trig} AND {eff}", "CASE WHEN {trig} THEN {eff} ELSE false END"}
	// vault.accounts: bob sees ids 1 and 3 (region US); 2 and 4 are
	// hidden. vault.ledger: 10 (US) is visible, 11 (EU) hidden.
	accounts := [2]string{"a.id = 2", "a.id = 5"}
	ledger := [2]string{"a.id = 11", "a.id = 12"}
	shapes := []struct {
		sql  string
		trig [2]string
	}{
		{"SELECT count(*) FROM vault.accounts a WHERE {P}", accounts},
		{"SELECT count(*) FROM vault.accounts_v a WHERE {P}", accounts},
		{"WITH w AS (SELECT * FROM vault.accounts) SELECT count(*) FROM w a WHERE {P}", accounts},
		{"SELECT count(*) FROM (SELECT id, owner FROM vault.accounts) a WHERE {P}", accounts},
		{"SELECT count(*) FROM vault.accounts a JOIN vault.ledger l ON ({P}) AND l.id > 0", accounts},
		{"SELECT count(l.id) FROM vault.ledger l LEFT JOIN vault.accounts a ON ({P})", accounts},
		{"SELECT count(*) FROM vault.ledger l WHERE EXISTS (SELECT 1 FROM vault.accounts a WHERE {P})", accounts},
		{"SELECT count(*) FROM vault.ledger l, LATERAL (SELECT a.id FROM vault.accounts a WHERE {P}) s", accounts},
		{"SELECT count(*) FROM (SELECT id, owner FROM vault.accounts UNION ALL SELECT id, owner FROM vault.accounts) a WHERE {P}", accounts},
		{"SELECT a.owner FROM vault.accounts a GROUP BY a.owner, a.id HAVING {P}", accounts},
		{"SELECT count(*) FROM (SELECT a.id, row_number() OVER (ORDER BY a.id) AS rn FROM vault.accounts a WHERE {P}) s", accounts},
		{"SELECT a.region, count(*) FROM vault.accounts a WHERE {P} GROUP BY GROUPING SETS ((a.region), ())", accounts},
		{"SELECT DISTINCT ON (a.region) a.id FROM vault.accounts a WHERE {P} ORDER BY a.region, a.id", accounts},
		{"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 2) SELECT count(*) FROM r, vault.accounts a WHERE {P}", accounts},
		{"SELECT count(*) FROM vault.ledger a WHERE {P}", ledger},
		{"SELECT count(*) FROM vault.ledger_eu a WHERE {P}", ledger},
	}
	digits := regexp.MustCompile(`[0-9]+`)
	// outcome is what the user sees of a statement or a sequence.
	outcome := func(err error, rows []string) string {
		var b strings.Builder
		b.WriteString(strings.Join(rows, ";"))
		if err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) {
				b.WriteString(" ERROR " + pe.Code + " " + digits.ReplaceAllString(pe.Message, "9"))
			} else {
				b.WriteString(" ERROR " + err.Error())
			}
		}
		b.WriteString(" NOTICES " + strings.Join(notices, "|"))
		return b.String()
	}
	exec := func(sql string) error {
		_, err := conn.PgConn().Exec(ctx, sql).ReadAll()
		return err
	}
	// Ways of sending one statement q; bind gets the trigger's constant
	// as a parameter.
	type way struct {
		name string
		run  func(q string) string
	}
	ways := []way{
		{"simple", func(q string) string {
			r, err := tryRows(conn, q, pgx.QueryExecModeSimpleProtocol)
			return outcome(err, r)
		}},
		{"extended", func(q string) string {
			r, err := tryRows(conn, q, pgx.QueryExecModeCacheStatement)
			return outcome(err, r)
		}},
		{"multi-statement", func(q string) string {
			res, err := conn.PgConn().Exec(ctx, "SELECT 1; "+q).ReadAll()
			var r []string
			for _, x := range res {
				for _, row := range x.Rows {
					r = append(r, string(bytes.Join(row, []byte("|"))))
				}
			}
			return outcome(err, r)
		}},
		{"cursor", func(q string) string {
			defer exec("ROLLBACK")
			if err := exec("BEGIN"); err != nil {
				return outcome(err, nil)
			}
			if err := exec("DECLARE c CURSOR FOR " + q); err != nil {
				return outcome(err, nil)
			}
			r, err := tryRows(conn, "FETCH ALL FROM c", pgx.QueryExecModeSimpleProtocol)
			return outcome(err, r)
		}},
		{"savepoint", func(q string) string {
			defer exec("ROLLBACK")
			if err := exec("BEGIN; SAVEPOINT s"); err != nil {
				return outcome(err, nil)
			}
			r, err := tryRows(conn, q, pgx.QueryExecModeSimpleProtocol)
			out := outcome(err, r)
			if err := exec("ROLLBACK TO SAVEPOINT s"); err != nil {
				out += " " + outcome(err, nil)
			}
			return out
		}},
		{"COPY", func(q string) string {
			var buf bytes.Buffer
			_, err := conn.PgConn().CopyTo(ctx, &buf, "COPY ("+q+") TO STDOUT")
			return outcome(err, strings.Split(strings.TrimSpace(buf.String()), "\n"))
		}},
		{"PREPARE/EXECUTE", func(q string) string {
			defer exec("DEALLOCATE ALL")
			if err := exec("PREPARE flow AS " + q); err != nil {
				return outcome(err, nil)
			}
			r, err := tryRows(conn, "EXECUTE flow", pgx.QueryExecModeSimpleProtocol)
			return outcome(err, r)
		}},
		{"set_config search_path", func(q string) string {
			defer exec("RESET search_path")
			if err := exec("SELECT pg_catalog.set_config('search_path', 'vault', false)"); err != nil {
				return outcome(err, nil)
			}
			r, err := tryRows(conn, strings.ReplaceAll(q, "vault.", ""), pgx.QueryExecModeSimpleProtocol)
			return outcome(err, r)
		}},
	}
	pairs := 0
	for _, s := range shapes {
		for ei, eff := range effects {
			form := forms[ei%len(forms)]
			pred := func(trig string) string {
				return "(" + strings.NewReplacer("{trig}", trig, "{eff}", eff).Replace(form) + ")"
			}
			probe := strings.ReplaceAll(s.sql, "{P}", pred(s.trig[0]))
			control := strings.ReplaceAll(s.sql, "{P}", pred(s.trig[1]))
			for _, w := range ways {
				notices = nil
				po := w.run(probe)
				notices = nil
				co := w.run(control)
				pairs++
				if po != co {
					t.Errorf("%s: probe and control differ\nprobe:   %s\ncontrol: %s\nSQL: %s", w.name, po, co, probe)
				}
			}
			// Bind parameters: one statement, the probe's constant and
			// the control's as its argument, under a generic plan.
			num := strings.TrimPrefix(s.trig[0], "a.id = ")
			bound := strings.ReplaceAll(s.sql, "{P}", pred("a.id = $1"))
			if err := exec("SET plan_cache_mode = force_generic_plan"); err == nil {
				t.Fatal("plan_cache_mode is a planner setting: a governed session may not set it")
			}
			var outs [2]string
			for i, arg := range []string{num, strings.TrimPrefix(s.trig[1], "a.id = ")} {
				notices = nil
				r, err := tryRows(conn, bound, pgx.QueryExecModeCacheStatement, arg)
				outs[i] = outcome(err, r)
			}
			pairs++
			if outs[0] != outs[1] {
				t.Errorf("bind parameters: probe and control differ\nprobe:   %s\ncontrol: %s\nSQL: %s", outs[0], outs[1], bound)
			}
		}
	}
	t.Logf("%d probe/control pairs through the proxy", pairs)

	// A wait behind a hidden row: pg_sleep runs only for a row that
	// reaches it, and a hidden one must not.
	for _, trig := range []string{"a.id = 2", "a.id = 5"} {
		start := time.Now()
		if _, err := tryRows(conn, "SELECT count(*) FROM vault.accounts a WHERE CASE WHEN "+trig+" THEN pg_catalog.pg_sleep(1) IS NOT NULL ELSE true END"); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 700*time.Millisecond {
			t.Errorf("%s: the statement waited %v: a hidden row reached pg_sleep", trig, d)
		}
	}
}
