package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
)

// execFixtureSQL creates execfix.accounts (filtered: n < 100, and masked:
// note, for analysts by execPolicies) and execfix_ref.accounts, which
// holds what bob may see of it: on the reference, PostgreSQL itself says
// what bob's PREPARE and EXECUTE return.
const execFixtureSQL = `
CREATE SCHEMA execfix;
CREATE TABLE execfix.accounts (id int, holder text, n int, note text);
INSERT INTO execfix.accounts VALUES (1, 'ann', 1, 'note one'), (2, 'ab', 2, 'note two'),
    (3, 'holder', 3, 'note three'), (4, 'EXEC-HIDDEN', 500, 'EXEC-SECRET');
CREATE SCHEMA execfix_ref;
CREATE TABLE execfix_ref.accounts (id int, holder text, n int, note text);
GRANT USAGE ON SCHEMA execfix TO pgranger_svc;
GRANT SELECT ON ALL TABLES IN SCHEMA execfix TO pgranger_svc;
`

var (
	execFixtureOnce sync.Once
	execFixtureErr  error
)

func execFixture(t *testing.T) {
	t.Helper()
	requireCluster(t)
	execFixtureOnce.Do(func() {
		sql := execFixtureSQL
		for _, r := range []struct {
			id, n          int
			holder, masked string
		}{{1, 1, "ann", "xxxx one"}, {2, 2, "ab", "xxxx two"}, {3, 3, "holder", "xxxx xhree"}} {
			// note ('note one', …) as Hive's MASK_SHOW_LAST_4 masks it
			sql += fmt.Sprintf("INSERT INTO execfix_ref.accounts VALUES (%d, '%s', %d, '%s');\n", r.id, r.holder, r.n, r.masked)
		}
		execFixtureErr = cluster.Exec(context.Background(), "demo", sql)
	})
	if execFixtureErr != nil {
		t.Fatal(execFixtureErr)
	}
}

func execPolicies(t *testing.T) policyDoc {
	doc := demoPolicies(t)
	doc.add(accessPolicy(990, "execfix", "*", "*", []string{"analysts"}))
	doc.add(rowFilterPolicy(991, "execfix", "accounts", []string{"analysts"}, "n < 100"))
	doc.add(maskPolicy(992, "execfix", "accounts", "note", []string{"public"}, "MASK_SHOW_LAST_4", ""))
	return doc
}

// The arguments of SQL EXECUTE are values computed in no table's scope, as
// in PostgreSQL: EXECUTE p(holder) fails with 42703 (it used to compare
// the column with itself), and expression arguments return PostgreSQL's
// rows. psql's whole output through pgranger — rows, errors with their
// LINE and caret — is byte for byte psql's output for the same script run
// directly on the reference copy of what bob may see; pgx, in the simple
// and the extended protocol, gets the same rows and errors.
func TestExecuteArgumentsLikePostgres(t *testing.T) {
	execFixture(t)
	p := startProxy(t, proxyOptions{policies: execPolicies(t).bytes(t)})
	script := strings.Join([]string{
		`PREPARE p (text) AS SELECT id, holder, note FROM execfix.accounts WHERE holder = $1 ORDER BY id;`,
		`EXECUTE p(holder);`,
		`EXECUTE p(accounts.holder);`,
		`EXECUTE p(execfix.accounts.holder);`,
		`EXECUTE p(lower(holder));`,
		`EXECUTE p('holder');`,
		`EXECUTE p('x');`,
		`EXECUTE p('a' || 'b');`,
		`EXECUTE p(lower('ANN'));`,
		`EXECUTE p((SELECT max(holder) FROM execfix.accounts));`,
		`EXECUTE p($1);`,
		`PREPARE q (int) AS SELECT id, n * $1 AS scaled FROM execfix.accounts WHERE n <= $1 ORDER BY id;`,
		`EXECUTE q(1 + 1);`,
		`EXECUTE q(2);`,
		`EXECUTE q('3');`,
		`EXECUTE q(n);`,
		`PREPARE r (float8) AS SELECT count(DISTINCT $1) AS values, count(*) FROM execfix.accounts, generate_series(1, 20);`,
		`EXECUTE r(random());`,
		`PREPARE v (varchar(2)) AS SELECT id, $1 AS v FROM execfix.accounts WHERE note LIKE '%' || right($1, 3) ORDER BY id;`,
		`EXECUTE v('xxxx xxx');`,
		`EXECUTE v(repeat('x', 4) || 'three');`,
	}, "\n") + "\n"
	// LC_ALL=C, no .psqlrc; errors go to stderr, which is compared too.
	run := func(dsn, script string) string {
		out, errOut, err := psqlDSN(t, dsn, script, "-v", "ON_ERROR_STOP=0")
		if err != nil {
			t.Fatalf("psql: %v\n%s", err, errOut)
		}
		return out + "\n--- stderr ---\n" + strings.ReplaceAll(errOut, "psql:<stdin>", "psql")
	}
	got := run(p.dsn("bob", "bob"), script)
	want := run(cluster.SuperDSN("demo"), strings.ReplaceAll(script, "execfix.", "execfix_ref."))
	// The reference's schema is named differently: so are its names in
	// psql's echo of an error's LINE.
	want = strings.ReplaceAll(want, "execfix_ref.", "execfix.")
	if got != want {
		t.Errorf("psql through pgranger:\n%s\npsql on PostgreSQL:\n%s", got, want)
	}
	for _, s := range []string{`column "holder" does not exist`, `missing FROM-clause entry for table "accounts"`,
		"cannot use subquery in EXECUTE parameter", "there is no parameter $1", "(0 rows)"} {
		if !strings.Contains(got, s) {
			t.Errorf("the output lacks %q:\n%s", s, got)
		}
	}
	if strings.Contains(got, "EXEC-") {
		t.Errorf("a hidden row or masked value reached psql:\n%s", got)
	}

	// pgx, both protocols: rows and errors as on PostgreSQL; aggregates,
	// window and set-returning functions refused with PostgreSQL's
	// SQLSTATE (their message names VALUES, docs/security.md).
	via := connect(t, p, "bob")
	direct := superConnTo(t, "demo")
	prepare := func(conn *pgx.Conn, schema string) {
		for _, s := range []string{
			"DEALLOCATE ALL",
			"PREPARE p (text) AS SELECT id, holder, note FROM " + schema + ".accounts WHERE holder = $1 ORDER BY id",
			"PREPARE q (int) AS SELECT id, n * $1 AS scaled FROM " + schema + ".accounts WHERE n <= $1 ORDER BY id",
		} {
			if _, err := conn.PgConn().Exec(context.Background(), s).ReadAll(); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	prepare(via, "execfix")
	prepare(direct, "execfix_ref")
	for _, c := range []struct {
		sql, code   string
		sameMessage bool
	}{
		{sql: "EXECUTE p(holder)", code: "42703", sameMessage: true},
		{sql: "EXECUTE p('holder')"},
		{sql: "EXECUTE p('a' || 'b')"},
		{sql: "EXECUTE q(1 + 1)"},
		{sql: "EXECUTE q(abs(-3))"},
		{sql: "EXECUTE q(count(*))", code: "42803"},
		{sql: "EXECUTE q(sum(1) OVER ())", code: "42P20"},
		{sql: "EXECUTE q(generate_series(1, 2))", code: "0A000"},
		{sql: "EXECUTE q((SELECT 1))", code: "0A000", sameMessage: true},
		// A data exception of a governed statement has a generic message
		// (docs/security.md, "Errors").
		{sql: "EXECUTE q(1 / 0)", code: "22012"},
	} {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
			label := fmt.Sprintf("%s [%s]", c.sql, mode)
			got, gotErr := tryRows(via, c.sql, mode)
			want, wantErr := tryRows(direct, c.sql, mode)
			switch {
			case c.code == "":
				if gotErr != nil || wantErr != nil {
					t.Errorf("%s: through pgranger %v, on PostgreSQL %v", label, gotErr, wantErr)
					continue
				}
				equalLines(t, label, got, want)
				if len(got) == 0 {
					t.Errorf("%s: no rows", label)
				}
			case sqlstate(gotErr) != c.code || sqlstate(wantErr) != c.code:
				t.Errorf("%s: through pgranger %v, on PostgreSQL %v; want SQLSTATE %s", label, gotErr, wantErr, c.code)
			case c.sameMessage && gotErr.Error() != wantErr.Error():
				t.Errorf("%s: through pgranger %v, on PostgreSQL %v", label, gotErr, wantErr)
			}
		}
	}
}
