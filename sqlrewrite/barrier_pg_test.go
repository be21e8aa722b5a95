package sqlrewrite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgranger/pgranger/internal/testpg"
)

// TestBarrierPostgres runs the barrier's cases (barrier.go, docs/security.md
// "The barrier") on a real PostgreSQL, with 20,000 extra rows in
// sales.orders: every third one EU (hidden from bob by region = 'US') with
// amount 900 and a customer that is not a number, so 1/(amount - 900) and
// customer::int fail on every hidden row. Each rewrite must return exactly
// the visible rows without an error, and its plan must be the case's: a
// key lookup uses the index in every case, a plain or guarded wrapper is
// flattened into the query (no Subquery Scan), a fenced one keeps the
// leaky join condition at the join, above the filtered scan.
func TestBarrierPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	c := testpg.Start(t)
	ctx := context.Background()
	if err := c.CreateDatabase(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	if err := c.Exec(ctx, "demo", goldenSchemaSQL(testRelations())+`
		INSERT INTO sales.orders
		SELECT i, CASE WHEN i % 3 = 0 THEN 'hidden ' ELSE '' END || i, NULL, NULL,
		       CASE WHEN i % 3 = 0 THEN 900 ELSE 1000 + i % 50 END,
		       CASE WHEN i % 3 = 0 THEN 'EU' ELSE 'US' END, DATE '2024-01-01' + i % 365
		FROM generate_series(100, 20099) i;
		CREATE UNIQUE INDEX ON sales.orders (id);
		ANALYZE;`); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, c.SuperDSN("demo"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rw := New(Options{})
	subj := testSubjects["bob"]
	sess := &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo",
		SearchPath: []string{"$user", "public"}, DefaultSearchPath: []string{"$user", "public"}}
	env := &Env{Policy: PolicyState{Engine: testEngine(t), Generation: 1}, Catalog: testCatalog(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	// 13,334 of the 20,000 rows are US; with the golden rows, 13,335.
	const visible = "13335"
	cases := []struct {
		name, sql string
		want      []string
		plan      []string // each must appear in EXPLAIN's output
		noPlan    []string // none may appear
	}{
		{"plain: key lookup", "SELECT id FROM sales.orders WHERE id = 101",
			[]string{"101"}, []string{"Index Scan using orders_id_idx"}, []string{"Subquery Scan", "Seq Scan on orders orders_1"}},
		{"plain: key lookup of a hidden row", "SELECT id FROM sales.orders WHERE id = 102",
			nil, []string{"Index Scan"}, []string{"Subquery Scan"}},
		{"guard: division oracle", "SELECT count(*) FROM sales.orders WHERE 1/(amount - 900) > 0",
			[]string{visible}, nil, []string{"Subquery Scan"}},
		{"guard: cast oracle", "SELECT count(*) FROM sales.orders WHERE customer::int > 0 OR true",
			[]string{visible}, nil, []string{"Subquery Scan"}},
		{"guard: key lookup keeps the index", "SELECT id FROM sales.orders WHERE id = 102 AND 1/(amount - 900) > 0",
			nil, []string{"Index Scan", "CASE WHEN"}, []string{"Subquery Scan"}},
		{"guard: ON of the null-extended side", "SELECT count(o.id) FROM sales.regions r LEFT JOIN sales.orders o ON o.region = r.region AND 1/(o.amount - 900) > 0",
			[]string{visible}, nil, []string{"Subquery Scan"}},
		{"fence: join-condition oracle, key lookup moved inside", "SELECT o.id FROM sales.orders o JOIN generate_series(0, 0) g ON 1/(o.amount - 900 + g) > 0 WHERE o.id IN (101, 102)",
			[]string{"101"}, []string{"Join Filter: (('1'::numeric", "Index Cond: (id = ANY"}, nil},
		{"fence: join-condition oracle", "SELECT count(*) FROM sales.orders o JOIN generate_series(0, 0) g ON 1/(o.amount - 900 + g) > 0",
			[]string{visible}, []string{"Join Filter: (('1'::numeric"}, nil},
		{"fence: correlated EXISTS", "SELECT count(*) FROM sales.orders o WHERE EXISTS (SELECT 1 FROM sales.regions r WHERE r.region = o.region AND 1/(o.amount - 900) > 0)",
			[]string{visible}, []string{"Subquery Scan"}, nil},
		{"fence: LATERAL VALUES oracle", "SELECT count(*) FROM sales.orders o, LATERAL (VALUES (1/(o.amount - 900))) v(c) WHERE v.c >= 0",
			[]string{visible}, nil, nil},
		{"fence: LATERAL subquery oracle", "SELECT count(*) FROM sales.orders o, LATERAL (SELECT 1/(o.amount - 900) AS c) s WHERE s.c >= 0",
			[]string{visible}, nil, nil},
		{"fence: a computed column compared with a leakproof operator", "SELECT count(*) FROM (SELECT (1/(amount - 900))::int AS c FROM sales.orders) s WHERE s.c = 0",
			[]string{visible}, nil, nil},
		{"plain: semi-join", "SELECT count(*) FROM sales.orders o WHERE o.region IN (SELECT region FROM sales.regions)",
			[]string{visible}, nil, []string{"Subquery Scan"}},
	}
	for _, tc := range cases {
		res := rw.Rewrite(ctx, env, sess, tc.sql)
		if res.Err != nil {
			t.Errorf("%s: %v", tc.name, res.Err)
			continue
		}
		if len(res.Views) > 0 {
			t.Errorf("%s: a read asks for views: %v", tc.name, res.Views)
		}
		got, err := textRows(ctx, conn, res.SQL)
		if err != nil {
			t.Errorf("%s: %v\nrewritten: %s", tc.name, err, res.SQL)
			continue
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s: rows %q, want %q\nrewritten: %s", tc.name, got, tc.want, res.SQL)
		}
		lines, err := textRows(ctx, conn, "EXPLAIN (COSTS OFF) "+res.SQL)
		if err != nil {
			t.Fatal(err)
		}
		plan := strings.Join(lines, "\n")
		for _, p := range tc.plan {
			if !strings.Contains(plan, p) {
				t.Errorf("%s: the plan has no %q:\n%s", tc.name, p, plan)
			}
		}
		for _, p := range tc.noPlan {
			if strings.Contains(plan, p) {
				t.Errorf("%s: the plan has %q:\n%s", tc.name, p, plan)
			}
		}
	}
}

// textRows runs sql and returns its rows, columns joined by "|".
func textRows(ctx context.Context, conn *pgx.Conn, sql string) ([]string, error) {
	rows, err := conn.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var cells []string
		for _, v := range rows.RawValues() {
			cells = append(cells, string(v))
		}
		out = append(out, strings.Join(cells, "|"))
	}
	return out, rows.Err()
}
