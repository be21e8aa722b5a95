package sqlrewrite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
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
	ctx := context.Background()
	_, conn := pgDatabase(t, "barrier", goldenSchemaSQL(testRelations())+`
		INSERT INTO sales.orders
		SELECT i, CASE WHEN i % 3 = 0 THEN 'hidden ' ELSE '' END || i, NULL, NULL,
		       CASE WHEN i % 3 = 0 THEN 900 ELSE 1000 + i % 50 END,
		       CASE WHEN i % 3 = 0 THEN 'EU' ELSE 'US' END, DATE '2024-01-01' + i % 365
		FROM generate_series(100, 20099) i;
		CREATE UNIQUE INDEX ON sales.orders (id);
		ANALYZE;`)
	rw := New(Options{})
	subj := testSubjects["bob"]
	sess := &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo",
		SearchPath: []string{"$user", "public"}, DefaultSearchPath: []string{"$user", "public"}}
	env := &Env{Policy: policy.Snapshot{Engine: testEngine(t), Generation: 1}, Catalog: testCatalog(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
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

// TestBarrierOraclesPostgres runs oracle predicates — each raises an error
// on every row bob's filter hides and is true on every row he sees — in
// every query shape of the list, against sales.orders through the rewrite
// and against sales.orders_us, a table holding exactly the visible rows.
// The rewrite must never raise the error and must return what the copy
// returns: whatever the planner does with the shape (pull-up, pushdown,
// parameterized paths, equivalence classes), no hidden row reaches the
// predicate.
func TestBarrierOraclesPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	ctx := context.Background()
	_, conn := pgDatabase(t, "oracles", goldenSchemaSQL(testRelations())+`
		DELETE FROM sales.orders;
		INSERT INTO sales.orders
		SELECT i, CASE WHEN i % 3 = 0 THEN 'hidden ' || i ELSE i::text END, NULL, NULL,
		       CASE WHEN i % 3 = 0 THEN 900 ELSE 1000 + i % 50 END,
		       CASE WHEN i % 3 = 0 THEN 'EU' ELSE 'US' END, DATE '2024-01-01' + i % 365
		FROM generate_series(1, 3000) i;
		INSERT INTO sales.regions SELECT 'R' || i, 'region ' || i FROM generate_series(1, 50) i;
		CREATE UNIQUE INDEX ON sales.orders (id);
		CREATE INDEX ON sales.orders (region);
		CREATE TABLE sales.orders_us AS SELECT * FROM ONLY sales.orders WHERE region = 'US';
		CREATE UNIQUE INDEX ON sales.orders_us (id);
		ANALYZE;`)
	rw := New(Options{})
	subj := &policy.Subject{User: "u", Groups: []string{"g"}}
	sess := &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo",
		SearchPath: []string{"$user", "public"}, DefaultSearchPath: []string{"$user", "public"}}
	// The filter costs more than any oracle, so that PostgreSQL, left to
	// itself, evaluates the oracle first (checked below: with every
	// wrapper plain, the oracles do reach hidden rows).
	eng := oneFilterEngine(t, "sales", "orders", costlyFilter)
	snap := catalog.Static(1, testRelations(), append([]string{"numnode", "plainto_tsquery"}, testCatalogFunctions...))
	env := &Env{Policy: policy.Snapshot{Engine: eng, Generation: 1}, Catalog: snap, Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}

	oracles := []string{
		"1/({a}.amount - 900) > 0",
		"(CASE WHEN {a}.region = 'US' THEN '1' ELSE {a}.customer END)::int > 0",
		"({a}.customer)::int > 0",
		"(1/({a}.amount - 900))::int >= 0",
		"{a}.id > 0 AND 1/({a}.amount - 900) > 0",
		"{a}.region = 'US' AND {a}.customer::int > 0",
		"({a}.amount - 1000)::numeric(2,0) >= 0",
	}
	ran, leaksIfPlain := 0, 0
	for _, shape := range barrierShapes {
		for _, o := range oracles {
			sql := shape
			for strings.Contains(sql, "{P:") {
				i := strings.Index(sql, "{P:")
				j := i + strings.Index(sql[i:], "}")
				alias := sql[i+3 : j]
				sql = sql[:i] + strings.ReplaceAll(o, "{a}", alias) + sql[j+1:]
			}
			copySQL := strings.ReplaceAll(sql, "{T}", "sales.orders_us")
			want, err := textRows(ctx, conn, copySQL)
			if err != nil {
				t.Fatalf("on the copy: %v\n%s", err, copySQL)
			}
			res := rw.Rewrite(ctx, env, sess, strings.ReplaceAll(sql, "{T}", "sales.orders"))
			if res.Err != nil {
				t.Errorf("%s: %v", sql, res.Err)
				continue
			}
			got, err := textRows(ctx, conn, res.SQL)
			if err != nil {
				t.Errorf("a hidden row reached the predicate: %v\nuser SQL: %s\nrewritten: %s", err, sql, res.SQL)
				continue
			}
			// The same statement with every wrapper plain: how often the
			// oracle would have worked.
			if _, err := textRows(ctx, conn, plainWrappers(res.SQL)); err != nil {
				leaksIfPlain++
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("rows %q, on the copy %q\nuser SQL: %s", got, want, sql)
			}
			ran++
		}
	}
	t.Logf("%d oracle queries; with plain wrappers, %d would have reached a hidden row", ran, leaksIfPlain)
	if leaksIfPlain < ran/3 {
		t.Errorf("only %d of %d queries would leak without the barrier: the fixture no longer exercises it", leaksIfPlain, ran)
	}
}

// plainWrappers undoes the barrier in a rewritten text: no fence, no guard
// (the guards' THEN arms become plain conjuncts again).
func plainWrappers(sql string) string {
	sql = strings.ReplaceAll(sql, " OFFSET 0)", ")")
	for {
		i := strings.Index(sql, " AND CASE WHEN ")
		if i < 0 {
			return sql
		}
		then := strings.Index(sql[i:], " THEN ")
		end := strings.Index(sql[i:], " ELSE false END")
		if then < 0 || end < 0 {
			return sql
		}
		sql = sql[:i] + " AND (" + sql[i+then+len(" THEN "):i+end] + ")" + sql[i+end+len(" ELSE false END"):]
	}
}

// oneFilterEngine grants group g select on every table of every database
// and filters db.table with filter.
func oneFilterEngine(t *testing.T, db, table, filter string) *policy.Engine {
	t.Helper()
	item := ranger.RangerPolicyItem{Accesses: []ranger.RangerPolicyItemAccess{{Type: "select", IsAllowed: true}}, Groups: []string{"g"}}
	sp := &ranger.ServicePolicies{ServiceName: "test", Policies: []ranger.RangerPolicy{
		{ID: 1, Name: "read", IsEnabled: true, Service: "test", ServiceType: "hive",
			Resources:   map[string]ranger.RangerPolicyResource{"database": {Values: []string{"*"}}, "table": {Values: []string{"*"}}, "column": {Values: []string{"*"}}},
			PolicyItems: []ranger.RangerPolicyItem{item}},
		{ID: 2, Name: "filter", IsEnabled: true, Service: "test", ServiceType: "hive", PolicyType: 2,
			Resources:            map[string]ranger.RangerPolicyResource{"database": {Values: []string{db}}, "table": {Values: []string{table}}},
			RowFilterPolicyItems: []ranger.RangerRowFilterPolicyItem{{RangerPolicyItem: item, RowFilterInfo: &ranger.RangerPolicyItemRowFilterInfo{FilterExpr: filter}}}},
	}}
	eng, err := policy.NewEngine(&ranger.Bundle{Policies: sp}, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// costlyFilter keeps region = 'US' at a cost above any user predicate,
// so that PostgreSQL, left to itself, evaluates the user's first.
const costlyFilter = "CASE WHEN pg_catalog.numnode(pg_catalog.plainto_tsquery('simple', region)) + pg_catalog.numnode(pg_catalog.plainto_tsquery('simple', customer)) > 0 THEN region = 'US' ELSE false END"

// barrierShapes are query shapes with a predicate {P:alias} on the
// table {T}: joins of every kind, subqueries, CTEs, LATERAL, VALUES,
// set operations, sublinks, HAVING and window functions.
var barrierShapes = []string{
	"SELECT count(*) FROM {T} a WHERE {P:a}",
	"SELECT a.id FROM {T} a WHERE a.id IN (1, 2, 3, 4, 5) AND {P:a} ORDER BY 1",
	"SELECT a.id FROM {T} a WHERE a.id = 3 OR {P:a} ORDER BY 1 LIMIT 3",
	"SELECT count(*) FROM {T} a JOIN sales.regions r ON r.region = a.region AND {P:a}",
	"SELECT count(*) FROM {T} a JOIN sales.regions r ON r.region = a.region WHERE {P:a}",
	"SELECT count(*) FROM sales.regions r LEFT JOIN {T} a ON r.region = a.region AND {P:a}",
	"SELECT count(a.id) FROM sales.regions r LEFT JOIN {T} a ON r.region = a.region WHERE {P:a} OR a.id IS NULL",
	"SELECT count(*) FROM {T} a LEFT JOIN sales.regions r ON r.region = a.region AND {P:a}",
	"SELECT count(*) FROM {T} a JOIN generate_series(0, 1) g ON {P:a} AND g = 0",
	"SELECT count(*) FROM {T} a, {T} b WHERE a.id = b.id AND {P:a}",
	"SELECT count(*) FROM {T} a, {T} b WHERE a.id = b.id + 0 AND {P:b}",
	"SELECT count(*) FROM (SELECT * FROM {T} a) s WHERE {P:s}",
	"SELECT count(*) FROM (SELECT a.id, a.amount, a.region, a.customer FROM {T} a WHERE a.id > 0) s WHERE {P:s}",
	"SELECT count(*) FROM (SELECT a.id, 1/(a.amount - 900) AS c FROM {T} a) s WHERE s.c > 0",
	"SELECT count(*) FROM (SELECT a.id, (1/(a.amount - 900))::int AS c FROM {T} a) s WHERE s.c = 0",
	"SELECT count(*) FROM (SELECT a.region, a.amount FROM {T} a GROUP BY a.region, a.amount) s WHERE 1/(s.amount - 900) > 0",
	"SELECT count(*) FROM (SELECT DISTINCT a.id, a.amount, a.region, a.customer FROM {T} a) s WHERE {P:s}",
	"SELECT count(*) FROM (SELECT * FROM {T} a LIMIT 100000) s WHERE {P:s}",
	"SELECT count(*) FROM (SELECT * FROM {T} a UNION ALL SELECT * FROM {T} b) u WHERE {P:u}",
	"WITH w AS (SELECT * FROM {T} a) SELECT count(*) FROM w WHERE {P:w}",
	"WITH w AS MATERIALIZED (SELECT * FROM {T} a) SELECT count(*) FROM w WHERE {P:w}",
	"WITH w AS (SELECT * FROM {T} a) SELECT count(*) FROM w x, w y WHERE x.id = y.id AND {P:x}",
	"SELECT count(*) FROM sales.regions r WHERE EXISTS (SELECT 1 FROM {T} a WHERE a.region = r.region AND {P:a})",
	"SELECT count(*) FROM sales.regions r WHERE NOT EXISTS (SELECT 1 FROM {T} a WHERE a.region = r.region AND NOT ({P:a}))",
	"SELECT count(*) FROM sales.regions r WHERE r.region IN (SELECT a.region FROM {T} a WHERE {P:a})",
	"SELECT count(*) FROM {T} x WHERE x.region IN (SELECT a.region FROM {T} a WHERE {P:a})",
	"SELECT count(*) FROM {T} x WHERE EXISTS (SELECT 1 FROM sales.regions r WHERE r.region = x.region) AND {P:x}",
	"SELECT count(*) FROM {T} x WHERE EXISTS (SELECT 1 FROM sales.regions r WHERE r.region = x.region AND {P:x})",
	"SELECT count(*) FROM {T} x WHERE (SELECT count(*) FROM sales.regions r WHERE {P:x}) > 0",
	"SELECT (SELECT count(*) FROM {T} a WHERE {P:a})",
	"SELECT count(*) FROM sales.regions r, LATERAL (SELECT count(*) AS n FROM {T} a WHERE a.region = r.region AND {P:a}) l",
	"SELECT count(*) FROM {T} a, LATERAL (SELECT 1/(a.amount - 900) AS c) l WHERE l.c > 0",
	"SELECT count(*) FROM {T} a, LATERAL (VALUES (1/(a.amount - 900))) v(c) WHERE v.c > 0",
	"SELECT count(*) FROM {T} a CROSS JOIN LATERAL (SELECT a.amount) l(x) WHERE 1/(l.x - 900) > 0",
	"SELECT a.amount FROM {T} a GROUP BY a.amount HAVING 1/(a.amount - 900) > 0 ORDER BY 1",
	"SELECT a.region, count(*) FROM {T} a GROUP BY a.region HAVING count(*) > 0 AND 1/(min(a.amount) - 900) > 0",
	"SELECT count(*) FROM {T} a WHERE a.id = ANY (ARRAY[1, 2, 3]) AND {P:a}",
	"SELECT count(*) FROM {T} a JOIN {T} b USING (id) WHERE {P:a}",
	"SELECT count(*) FROM {T} a JOIN {T} b ON a.id = b.id AND a.amount = b.amount WHERE {P:b}",
	"SELECT count(*) FROM {T} a WHERE a.region = 'US' AND a.region = lower(a.customer || 'US') OR {P:a}",
	"SELECT sum(CASE WHEN {P:a} THEN 1 ELSE 0 END) FROM {T} a",
	"SELECT count(*) FROM (SELECT a.*, row_number() OVER (ORDER BY a.id) AS rn FROM {T} a) s WHERE {P:s}",
	"SELECT count(*) FROM {T} a WHERE a.id IN (SELECT generate_series(1, 3000)) AND {P:a}",
	"SELECT count(*) FROM {T} a WHERE {P:a} AND a.id IN (SELECT b.id FROM {T} b WHERE {P:b})",
	"SELECT count(*) FROM {T} a WHERE ({P:a}) = (SELECT count(*) > 0 FROM sales.regions)",
	"SELECT count(*) FROM {T} a WHERE ({P:a}) OR EXISTS (SELECT 1 FROM sales.regions r WHERE r.region = 'none')",
	"SELECT count(*) FROM {T} a WHERE ({P:a}) AND a.id > (SELECT count(*) FROM {T} b WHERE {P:b}) - 5000",
}
