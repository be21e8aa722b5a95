package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A row filter must not be an oracle: a user predicate that raises an
// error or a notice on a row the filter removes must never be evaluated on
// that row. The filter here is costly, so that PostgreSQL, given a plain
// subquery, evaluates the cheaper user predicate first — each oracle is
// first shown to work directly, then run through pgranger in each case of
// the barrier rule (docs/security.md "The barrier"): a leaky predicate on
// the table alone moves inside the wrapper under a guard, one that also
// reads another FROM item fences the wrapper.
func TestRowFilterIsASecurityBarrier(t *testing.T) {
	const filter = "CASE WHEN pg_catalog.numnode(pg_catalog.plainto_tsquery('simple', region)) + pg_catalog.numnode(pg_catalog.plainto_tsquery('simple', owner)) > 0 THEN region = 'US' ELSE false END"
	oracles := []struct {
		name, pred, sqlstate string // sqlstate "" = a notice
	}{
		{"division by zero", "1/(CASE WHEN region = 'US' THEN 1 ELSE 0 END) > 0", "22012"},
		{"cast error", "(CASE WHEN region = 'US' THEN '1' ELSE owner END)::int > 0", "22P02"},
		{"notice", "pg_catalog.numnode(pg_catalog.plainto_tsquery('english', CASE WHEN region = 'US' THEN 'visible' ELSE 'the' END)) >= 0", ""},
	}
	ctx := context.Background()
	var notices []string
	cfg, err := pgx.ParseConfig(cluster.SuperDSN("demo"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n.Message) }
	direct, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close(ctx)
	for _, o := range oracles {
		notices = nil
		_, err := tryRows(direct, "SELECT id FROM (SELECT * FROM vault.accounts WHERE "+filter+") a WHERE "+o.pred, pgx.QueryExecModeSimpleProtocol)
		if o.sqlstate != "" && sqlstate(err) != o.sqlstate || o.sqlstate == "" && len(notices) == 0 {
			t.Fatalf("%s: the fixture no longer demonstrates the oracle with a plain subquery (err = %v, notices %q)", o.name, err, notices)
		}
	}

	doc := attackPolicies(t)
	doc.add(rowFilterPolicy(959, "vault", "accounts", []string{"analysts"}, filter))
	p := startProxy(t, proxyOptions{policies: doc.bytes(t)})
	var seen capture
	conn := connectCapturing(t, p, "bob", &seen)
	for _, o := range oracles {
		pred := strings.ReplaceAll(strings.ReplaceAll(o.pred, "region", "a.region"), "owner", "a.owner")
		cases := map[string]string{
			"guard":             "SELECT a.id FROM vault.accounts a WHERE " + pred + " ORDER BY 1",
			"guard, key lookup": "SELECT a.id FROM vault.accounts a WHERE a.id IN (1, 2) AND " + pred + " ORDER BY 1",
			"fence":             "SELECT a.id FROM vault.accounts a JOIN generate_series(1, 1) g ON " + pred + " AND g = 1 ORDER BY 1",
			"fence, key lookup": "SELECT a.id FROM vault.accounts a JOIN generate_series(1, 1) g ON " + pred + " AND g = 1 WHERE a.id IN (1, 2) ORDER BY 1",
			"CTE":               "WITH v AS (SELECT id, region, owner FROM vault.accounts) SELECT a.id FROM v a WHERE " + pred + " ORDER BY 1",
		}
		want := map[string][]string{"guard": {"1", "3"}, "guard, key lookup": {"1"}, "fence": {"1", "3"}, "fence, key lookup": {"1"}, "CTE": {"1", "3"}}
		for name, sql := range cases {
			for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
				got, err := tryRows(conn, sql, mode)
				if err != nil {
					t.Errorf("%s, %s [%v]: the predicate ran on a filtered-out row: %v", o.name, name, mode, err)
					continue
				}
				equalLines(t, o.name+", "+name, got, want[name])
			}
		}
	}
	// A leakproof lookup (the plain case): a hidden key finds nothing.
	equalLines(t, "hidden key", rows(t, conn, "SELECT id FROM vault.accounts WHERE id = 2"), nil)
	equalLines(t, "visible key", rows(t, conn, "SELECT card FROM vault.accounts WHERE id = 1"), []string{"xxxx-xxxx-xxxx-1234"})
	if strings.Contains(seen.String(), "NOTICE") {
		t.Errorf("a notice reached the client: %q", seen.String())
	}
	noSecrets(t, &seen, "xxxx-xxxx-xxxx-1234")

	// Inside a transaction and after a rollback nothing changes: reads
	// leave nothing behind on the backend session.
	rows(t, conn, "BEGIN", pgx.QueryExecModeSimpleProtocol)
	equalLines(t, "in a transaction", rows(t, conn, "SELECT count(*) FROM vault.accounts", pgx.QueryExecModeSimpleProtocol), []string{"2"})
	rows(t, conn, "ROLLBACK", pgx.QueryExecModeSimpleProtocol)
	equalLines(t, "after rollback", rows(t, conn, "SELECT count(*) FROM vault.accounts"), []string{"2"})
	equalLines(t, "no temporary views", rows(t, conn, "SELECT count(*) FROM pg_catalog.pg_class WHERE relpersistence = 't'"), []string{"0"})
}
