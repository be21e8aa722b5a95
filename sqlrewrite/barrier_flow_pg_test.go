package sqlrewrite

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/policy"
)

// TestBarrierControlFlowPostgres runs probe/control pairs through the
// rewrite on a real PostgreSQL (docs/security.md "The barrier"). A probe
// puts an effect — an error, a notice, a wait — behind a trigger: a
// condition that holds on one hidden row and on no visible one. Its
// control is the same statement with the trigger's constant changed to
// one that matches no row at all. On a table holding only the visible
// rows the two are the same statement, so through pgranger they must
// behave identically: same rows, same error or none, same notices, no
// extra wait. Any difference means a row the filter hides decided
// whether the effect ran.
//
// The effects are what a leakproof comparison's result could decide:
// an uncorrelated subquery (an initplan, run when a row first reaches
// it), a stable function that fails or raises a notice without column
// inputs, a cast of a statement-wide value, a division by a stable
// expression, pg_sleep. They run in every query shape of barrierShapes,
// under four filters (an equality, which PostgreSQL orders after every
// other qual as an equivalence class; an expensive expression; an IN
// subquery, which it would make a semi-join above the scan; a view whose
// definition is a join), with planner settings that reorder quals and
// joins, with literals and with bind parameters under a generic plan.
func TestBarrierControlFlowPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	ctx := context.Background()
	rels := append(testRelations(),
		&catalog.Relation{OID: 2001, Schema: "sales", Name: "allowed", Kind: 'r', Owner: "postgres",
			Columns: []catalog.Column{col("region", 25, "text"), col("who", 25, "text")}},
		&catalog.Relation{OID: 2002, Schema: "sales", Name: "orders_joined", Kind: 'v', Owner: "postgres",
			Columns: []catalog.Column{col("id", 23, "integer"), col("customer", 25, "text"),
				{Name: "amount", TypeOID: 1700, BaseOID: 1700, TypMod: 786438, TypeName: "numeric(12,2)"},
				col("region", 25, "text"), col("rname", 25, "text")},
			ViewDef: " SELECT o.id,\n    o.customer,\n    o.amount,\n    o.region,\n    r.name AS rname\n   FROM sales.orders o\n     JOIN sales.regions r ON r.region = o.region;"})
	shared, _ := pgDatabase(t, "controlflow", goldenSchemaSQL(rels)+`
		DELETE FROM sales.orders;
		INSERT INTO sales.orders
		SELECT i, CASE WHEN i % 3 = 0 THEN 'hidden ' || i ELSE i::text END, NULL, NULL,
		       CASE WHEN i % 3 = 0 THEN 900 ELSE 1000 + i % 50 END,
		       CASE WHEN i % 3 = 0 THEN 'EU' ELSE 'US' END, DATE '2024-01-01' + i % 365
		FROM generate_series(1, 1200) i;
		DELETE FROM sales.orders WHERE id = 2;
		INSERT INTO sales.allowed VALUES ('US', 'u'), ('EU', 'someone else');
		CREATE UNIQUE INDEX ON sales.orders (id);
		CREATE INDEX ON sales.orders (region);
		CREATE INDEX ON sales.orders (customer);
		CREATE TABLE sales.orders_us AS SELECT * FROM ONLY sales.orders WHERE region = 'US';
		CREATE UNIQUE INDEX ON sales.orders_us (id);
		CREATE VIEW sales.orders_joined_us AS SELECT o.id, o.customer, o.amount, o.region, r.name AS rname
			FROM sales.orders_us o JOIN sales.regions r ON r.region = o.region;
		ANALYZE;`)
	var notices []string
	cfg, err := pgx.ParseConfig(shared.SuperDSN("controlflow"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		notices = append(notices, n.Severity+" "+n.Code+" "+n.Message)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	rw := New(Options{})
	subj := &policy.Subject{User: "u", Groups: []string{"g"}}
	sess := &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo",
		SearchPath: []string{"$user", "public"}, DefaultSearchPath: []string{"$user", "public"}}
	snap := catalog.Static(1, rels, append([]string{"numnode", "plainto_tsquery", "to_date", "pg_backend_pid"}, testCatalogFunctions...))

	filters := []struct{ name, table, copy, expr string }{
		{"equality", "orders", "orders_us", "region = 'US'"},
		{"expensive", "orders", "orders_us", costlyFilter},
		{"IN subquery", "orders", "orders_us", "region IN (SELECT a.region FROM sales.allowed a WHERE a.who = 'u')"},
		{"joined view", "orders_joined", "orders_joined_us", "rname = 'United States'"},
	}
	// Each effect happens whenever it is evaluated, whatever the row.
	effects := []string{
		"{a}.id <> (SELECT (1/(pg_catalog.count(*) - pg_catalog.count(*)))::int FROM pg_catalog.pg_class)",
		"EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE 1/(c.relnatts - c.relnatts) = 1)",
		"{a}.id = ANY (ARRAY(SELECT 1/(pg_catalog.count(*) - pg_catalog.count(*))::int FROM pg_catalog.pg_class))",
		"pg_catalog.current_setting('no.such') = 'x'",
		"pg_catalog.to_date('x', 'YYYY') IS NOT NULL",
		"LOCALTIMESTAMP::text::int > 0",
		"1/(pg_catalog.pg_backend_pid() - pg_catalog.pg_backend_pid()) = 1",
		"pg_catalog.plainto_tsquery('the') IS NOT NULL",
	}
	// Ways to put an effect behind a trigger.
	forms := []string{
		"{trig} AND {eff}",
		"CASE WHEN {trig} THEN {eff} ELSE false END",
		"{trig} AND ({eff} OR {a}.id < 0)",
		"NOT ({trig}) OR {eff}",
	}
	// Probe and control triggers: the first matches one hidden row, the
	// second no row; the planner estimates both alike (a unique value),
	// so probe and control get the same plan, and neither contradicts a
	// shape's own conditions on id (a contradiction PostgreSQL proves
	// while planning removes the scan and the quals with it).
	triggers := [][2]string{
		{"{a}.id = 3", "{a}.id = 2"},
		{"{a}.customer = 'hidden 6'", "{a}.customer = 'hidden 7'"},
	}
	settings := []string{
		"",
		"SET enable_seqscan = off",
		"SET cpu_operator_cost = 0; SET cpu_tuple_cost = 0",
		"SET enable_hashjoin = off; SET enable_mergejoin = off",
	}
	// What a user sees of a statement. Digits in messages are masked:
	// an error may quote LOCALTIMESTAMP.
	type outcome struct {
		rows, err, notices string
		dur                time.Duration
	}
	// timedOut: the statement hit the test's statement_timeout (57014),
	// which is the machine's speed, not the query's outcome.
	timedOut := func(o outcome) bool { return strings.HasPrefix(o.err, "57014 ") }
	digits := regexp.MustCompile(`[0-9]+`)
	run := func(sql string, args ...any) outcome {
		notices = nil
		start := time.Now()
		rows, err := conn.Query(ctx, sql, args...)
		var o outcome
		if err == nil {
			var lines []string
			for rows.Next() {
				var cells []string
				for _, v := range rows.RawValues() {
					cells = append(cells, string(v))
				}
				lines = append(lines, strings.Join(cells, "|"))
			}
			rows.Close()
			err = rows.Err()
			o.rows = strings.Join(lines, "\n")
		}
		if err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) {
				o.err = pe.Code + " " + digits.ReplaceAllString(pe.Message, "9")
			} else {
				o.err = err.Error()
			}
		}
		o.notices = strings.Join(notices, "\n")
		o.dur = time.Since(start)
		return o
	}
	fill := func(shape, pred, table string) string {
		sql := shape
		for strings.Contains(sql, "{P:") {
			i := strings.Index(sql, "{P:")
			j := i + strings.Index(sql[i:], "}")
			alias := sql[i+3 : j]
			sql = sql[:i] + "(" + strings.ReplaceAll(pred, "{a}", alias) + ")" + sql[j+1:]
		}
		return strings.ReplaceAll(sql, "{T}", "sales."+table)
	}
	pred := func(form, trig, eff string) string {
		return strings.NewReplacer("{trig}", trig, "{eff}", eff).Replace(form)
	}

	pairs, differ := 0, 0
	for fi, f := range filters {
		eng := oneFilterEngine(t, "sales", f.table, f.expr)
		env := &Env{Policy: policy.Snapshot{Engine: eng, Generation: 1}, Catalog: snap, Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		i := fi
		for si, shape := range barrierShapes {
			// Half the effects per shape, the other half for the next
			// shape; every form, trigger and setting in turn.
			for k := 0; k < len(effects)/2; k++ {
				eff := effects[(si+k*2)%len(effects)]
				i++
				form, trig, set := forms[i%len(forms)], triggers[(i/len(forms))%len(triggers)], settings[(i/3)%len(settings)]
				probe := fill(shape, pred(form, trig[0], eff), f.table)
				control := fill(shape, pred(form, trig[1], eff), f.table)
				pr, cr := rw.Rewrite(ctx, env, sess, probe), rw.Rewrite(ctx, env, sess, control)
				if pr.Err != nil || cr.Err != nil {
					t.Errorf("%s: not rewritten: %v / %v\n%s", f.name, pr.Err, cr.Err, probe)
					continue
				}
				if _, err := conn.Exec(ctx, "RESET ALL; SET statement_timeout = '5s'"); err != nil {
					t.Fatal(err)
				}
				if set != "" {
					if _, err := conn.Exec(ctx, set); err != nil {
						t.Fatal(err)
					}
				}
				start := time.Now()
				po, co := run(pr.SQL, pgx.QueryExecModeSimpleProtocol), run(cr.SQL, pgx.QueryExecModeSimpleProtocol)
				if d := time.Since(start); d > time.Second {
					t.Logf("slow pair (%v, %q): %s", d, set, probe)
				}
				if timedOut(po) || timedOut(co) {
					// The 5 s bound is for hangs; a busy machine can pass
					// it on a nested-loop plan. A timeout says nothing
					// about the rows, so the pair runs again with room.
					if _, err := conn.Exec(ctx, "SET statement_timeout = '120s'"); err != nil {
						t.Fatal(err)
					}
					po, co = run(pr.SQL, pgx.QueryExecModeSimpleProtocol), run(cr.SQL, pgx.QueryExecModeSimpleProtocol)
				}
				pairs++
				po.dur, co.dur = 0, 0 // timing: the pg_sleep pairs below
				if po != co {
					differ++
					t.Errorf("%s filter, %q: probe and control differ\nprobe:   %+v\ncontrol: %+v\nuser SQL: %s\nrewritten: %s",
						f.name, set, po, co, probe, pr.SQL)
				}
			}
		}
		// Bind parameters under a generic plan: one prepared statement,
		// executed with the probe's constant and the control's.
		for si, shape := range barrierShapes {
			eff := effects[si%len(effects)]
			form := forms[si%len(forms)]
			sql := fill(shape, pred(form, "{a}.id = $1", eff), f.table)
			penv := *env
			penv.ParamTypes = []uint32{catalog.OIDInt4}
			res := rw.Rewrite(ctx, &penv, sess, sql)
			if res.Err != nil {
				t.Errorf("%s: not rewritten: %v\n%s", f.name, res.Err, sql)
				continue
			}
			if _, err := conn.Exec(ctx, "RESET ALL; SET statement_timeout = '5s'; SET plan_cache_mode = force_generic_plan"); err != nil {
				t.Fatal(err)
			}
			po, co := run(res.SQL, pgx.QueryExecModeExec, 3), run(res.SQL, pgx.QueryExecModeExec, 2)
			if timedOut(po) || timedOut(co) {
				if _, err := conn.Exec(ctx, "SET statement_timeout = '120s'"); err != nil {
					t.Fatal(err)
				}
				po, co = run(res.SQL, pgx.QueryExecModeExec, 3), run(res.SQL, pgx.QueryExecModeExec, 2)
			}
			po.dur, co.dur = 0, 0
			pairs++
			if po != co {
				differ++
				t.Errorf("%s filter, parameters: probe and control differ\nprobe:   %+v\ncontrol: %+v\nuser SQL: %s\nrewritten: %s",
					f.name, po, co, sql, res.SQL)
			}
		}
		// A wait: only behind a CASE, so that the effect never runs on a
		// visible row (pg_sleep is volatile; a volatile conjunct runs on
		// every row that reaches it).
		for _, shape := range barrierShapes[:12] {
			const sleep = "CASE WHEN {a}.id = %d THEN pg_catalog.pg_sleep(0.3) IS NOT NULL ELSE true END"
			probe, control := fill(shape, fmt.Sprintf(sleep, 3), f.table), fill(shape, fmt.Sprintf(sleep, 2), f.table)
			pr, cr := rw.Rewrite(ctx, env, sess, probe), rw.Rewrite(ctx, env, sess, control)
			if pr.Err != nil || cr.Err != nil {
				t.Errorf("%s: not rewritten: %v / %v\n%s", f.name, pr.Err, cr.Err, probe)
				continue
			}
			if _, err := conn.Exec(ctx, "RESET ALL"); err != nil {
				t.Fatal(err)
			}
			pairs++
			po, co := run(pr.SQL, pgx.QueryExecModeSimpleProtocol), run(cr.SQL, pgx.QueryExecModeSimpleProtocol)
			if po.dur-co.dur > 250*time.Millisecond {
				differ++
				t.Errorf("%s filter: a hidden row reached pg_sleep (%v, control %v)\nuser SQL: %s\nrewritten: %s", f.name, po.dur, co.dur, probe, pr.SQL)
			}
		}
	}
	t.Logf("%d probe/control pairs, %d differ", pairs, differ)
	if pairs < 900 {
		t.Errorf("only %d pairs ran", pairs)
	}
}
