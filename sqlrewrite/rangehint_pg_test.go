package sqlrewrite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pgranger/pgranger/policy"
)

// TestRangeHintImpliedPostgres checks on PostgreSQL the implication the
// range hint rests on (rangehint.go): for every date d and timestamp t of
// a set with the edges — infinities, the last date a timestamp holds and
// dates past it, dates before Christ, midnights and times just after and
// before them — and every comparison, wherever "d op t" is true the hint
// ("d <= t::date", "d >= t::date" or "d = t::date") is true too.
func TestRangeHintImpliedPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	ctx := context.Background()
	_, conn := pgDatabase(t, "rangehint", `
		CREATE TABLE d (d date);
		INSERT INTO d VALUES ('infinity'), ('-infinity'), ('294276-12-31'), ('294277-01-01'), ('5874897-12-31'),
		  ('4713-11-24 BC'), ('4713-11-25 BC'), ('0001-01-01 BC'), ('0001-01-01'), ('1993-12-31'), ('1994-01-01'),
		  ('1994-01-02'), ('1994-12-31'), ('1995-01-01'), ('1995-01-02'), ('2000-02-29'), (NULL);
		CREATE TABLE t (t timestamp);
		INSERT INTO t VALUES ('infinity'), ('-infinity'), ('294276-12-31 23:59:59.999999'), ('294276-12-31 00:00'),
		  ('4713-11-24 00:00 BC'), ('4713-11-24 00:00:00.000001 BC'), ('0001-01-01 23:59:59.999999 BC'), ('0001-01-01 00:00'),
		  ('1994-01-01 00:00'), ('1994-01-01 00:00:00.000001'), ('1993-12-31 23:59:59.999999'), ('1994-12-31 12:00'),
		  ('1995-01-01 00:00'), ('2000-02-29 23:59:59'), (NULL);`)
	hints := map[string]string{"<": "<=", "<=": "<=", ">": ">=", ">=": ">=", "=": "="}
	for op, hint := range hints {
		// Both orientations: t on the right, and on the left (commuted).
		for _, q := range []string{
			"SELECT count(*), count(*) FILTER (WHERE d " + op + " t) FROM d, t WHERE d " + op + " t AND NOT (d " + hint + " t::date)",
			"SELECT count(*), count(*) FILTER (WHERE t " + commuted(op) + " d) FROM d, t WHERE t " + commuted(op) + " d AND NOT (d " + hint + " t::date)",
		} {
			var bad, n int64
			if err := conn.QueryRow(ctx, q).Scan(&bad, &n); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			if bad != 0 {
				t.Errorf("%s: %d pairs where the condition holds and its hint does not", q, bad)
			}
		}
		var holds int64
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM d, t WHERE d "+op+" t").Scan(&holds); err != nil {
			t.Fatal(err)
		}
		if holds == 0 && op != "=" {
			t.Errorf("d %s t holds for no pair: the check is empty", op)
		}
	}
}

func commuted(op string) string {
	return map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}[op]
}

// TestRangeHintPlanPostgres: with the hint, a guarded date range over
// date + interval is an index range scan on the date column, with the
// rows of the range (not a sequential scan of the table).
func TestRangeHintPlanPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	ctx := context.Background()
	_, conn := pgDatabase(t, "rangehintplan", goldenSchemaSQL(testRelations())+`
		INSERT INTO hr.employees (id, name, email, salary, department, hire_date)
		SELECT i, 'e' || i, 'e' || i || '@x', 1000, CASE WHEN i % 4 = 0 THEN 'board' ELSE 'ops' END, DATE '1990-01-01' + i % 7300
		FROM generate_series(1, 40000) i;
		CREATE INDEX ON hr.employees (hire_date);
		ANALYZE;`)
	subj := testSubjects["frank"]
	sess := &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo",
		SearchPath: []string{"$user", "public"}, DefaultSearchPath: []string{"$user", "public"}}
	env := &Env{Policy: policy.Snapshot{Engine: testEngine(t), Generation: 1}, Catalog: testCatalog(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	sql := "SELECT count(*) FROM hr.employees WHERE hire_date >= DATE '1994-01-01' AND hire_date < DATE '1994-01-01' + INTERVAL '1' MONTH"
	res := New(Options{}).Rewrite(ctx, env, sess, sql)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if !strings.Contains(res.SQL, "CASE WHEN") || !strings.Contains(res.SQL, "::pg_catalog.date") {
		t.Fatalf("not guarded with a hint: %s", res.SQL)
	}
	got, err := textRows(ctx, conn, res.SQL)
	if err != nil {
		t.Fatal(err)
	}
	want, err := textRows(ctx, conn, "SELECT count(*) FROM hr.employees WHERE department <> 'board' AND hire_date >= DATE '1994-01-01' AND hire_date < DATE '1994-01-01' + INTERVAL '1' MONTH")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != 1 || got[0] == "0" {
		t.Fatalf("got %v, want %v", got, want)
	}
	plan, err := textRows(ctx, conn, "EXPLAIN "+res.SQL)
	if err != nil {
		t.Fatal(err)
	}
	p := strings.Join(plan, "\n")
	cond := ""
	for _, l := range plan {
		if strings.Contains(l, "Index Cond:") {
			cond = l
		}
	}
	if !strings.Contains(cond, "(hire_date >= '1994-01-01'::date)") || !strings.Contains(cond, "(hire_date <= '1994-02-01'::date)") {
		t.Errorf("the guarded range is not an index range scan:\n%s", p)
	}
}
