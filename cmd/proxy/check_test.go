package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgranger/pgranger/internal/testpg"
	"github.com/pgranger/pgranger/internal/testrepo"
	"github.com/pgranger/pgranger/sqlrewrite"
)

// `pgranger check` offline: the demo configuration and policies, the
// demo's tables declared in the example decision table.
func TestCheckCommandOffline(t *testing.T) {
	root := testrepo.Root(t)
	cfg := filepath.Join(root, "examples", "pgranger.toml")
	cat := filepath.Join(root, "examples", "policies", "decisions.yaml")

	code, out, errOut := runCLI("check", "--config", cfg, "--catalog", cat, "--user", "bob",
		"SELECT id, ssn, email, amount FROM sales.orders WHERE amount > 10")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"user bob, groups analysts, roles analyst, attributes region=US\n" +
			"mask dialect: hive (HiveServer2's mask results; policy.mask-dialect)\n",
		"statement 1: SELECT\n  database=sales table=orders\n",
		"    select id, ssn, email, amount: allowed by policy 1\n",
		"    mask ssn: MASK_SHOW_LAST_4 (policy 10)\n",
		"    mask email: MASK_HASH (policy 11)\n",
		"    row filter: region = '${{USER.region}}' (policy 20)\n",
		"result: allowed\n",
		"rewritten SQL:\nSELECT id, ssn, email, amount FROM (SELECT id, customer, ",
		// amount > 10 is a numeric comparison, which PostgreSQL does not
		// mark leakproof: it moves into the wrapper under the filter.
		"FROM sales.orders WHERE region = 'US' AND CASE WHEN region = 'US' THEN amount > 10 ELSE false END) orders\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "mask amount") || strings.Contains(out, "mask id") {
		t.Errorf("unmasked columns are listed as masked:\n%s", out)
	}

	// Flags replace the static user's groups and attributes.
	code, out, _ = runCLI("check", "--config", cfg, "--catalog", cat, "--user", "bob", "--groups", "support", "--attr", "region=EU",
		"SELECT amount FROM sales.orders")
	if code != 0 || !strings.Contains(out, "groups support,") || !strings.Contains(out, "attributes region=EU") ||
		!strings.Contains(out, "WHERE region = 'EU'") || !strings.Contains(out, "NULL::numeric AS amount") {
		t.Errorf("flags: exit %d\n%s", code, out)
	}

	// A denial: the decisions and the error, exit 1.
	code, out, _ = runCLI("check", "--config", cfg, "--catalog", cat, "--user", "bob", "SELECT name, salary FROM hr.employees")
	for _, want := range []string{
		"    select name: allowed by policy 2\n",
		"    select salary: denied by policy 3\n",
		"result: denied\nERROR 42501: pgranger: permission denied: user \"bob\" has no select access to column hr.employees.salary\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("denial output lacks %q:\n%s", want, out)
		}
	}
	if code != 1 {
		t.Errorf("denial: exit %d, want 1", code)
	}

	// --who: who the policies allow and deny the relation's access.
	code, out, _ = runCLI("check", "--config", cfg, "--catalog", cat, "--user", "bob", "--who", "SELECT name FROM hr.employees")
	if code != 0 || !strings.Contains(out, "  database=hr table=employees\n    who may select: users -; groups analysts,compliance\n    denied select: users -; groups support\n") {
		t.Errorf("--who: exit %d\n%s", code, out)
	}

	// A user no policy knows; a table-level read.
	code, out, _ = runCLI("check", "--config", cfg, "--catalog", cat, "--user", "mallory", "SELECT count(*) FROM sales.orders")
	if code != 1 || !strings.Contains(out, "select (table-level, no column read): denied (no policy grants it)") {
		t.Errorf("unknown user: exit %d\n%s", code, out)
	}

	// Nothing governed: sent unchanged.
	code, out, _ = runCLI("check", "--config", cfg, "--catalog", cat, "--user", "bob", "SELECT 1")
	if code != 0 || !strings.Contains(out, "SQL sent unchanged:\nSELECT 1\n") {
		t.Errorf("ungoverned: exit %d\n%s", code, out)
	}
}

func TestCheckCommandErrors(t *testing.T) {
	root := testrepo.Root(t)
	cfg := filepath.Join(root, "examples", "pgranger.toml")
	if code, _, errOut := runCLI("check", "--config", cfg, "SELECT 1"); code != 2 || !strings.Contains(errOut, "usage: pgranger check") {
		t.Errorf("no user: exit %d %q", code, errOut)
	}
	if code, _, errOut := runCLI("check", "--config", cfg, "--user", "bob", "--attr", "novalue", "SELECT 1"); code != 2 || !strings.Contains(errOut, "key=value") {
		t.Errorf("bad --attr: exit %d %q", code, errOut)
	}
	dir := t.TempDir()
	// Without --catalog the backend is asked; a backend that is not there
	// is an error that points at --catalog.
	down := writeFile(t, dir, "down.toml", `
[backend]
dsn = "postgres://u:p@127.0.0.1:1/demo?sslmode=disable"
connect-timeout-secs = 2
[[identity.users]]
name = "bob"
password = "bob"
[policy.file]
policies = "`+filepath.Join(root, "examples", "policies", "hive.json")+`"
`)
	if code, _, errOut := runCLI("check", "--config", down, "--user", "bob", "SELECT 1"); code != 1 || !strings.Contains(errOut, "--catalog") {
		t.Errorf("backend down: exit %d %q", code, errOut)
	}
	badCat := writeFile(t, dir, "cat.yaml", "catalog:\n  - table: a.b\n")
	if code, _, errOut := runCLI("check", "--config", cfg, "--catalog", badCat, "--user", "bob", "SELECT 1"); code != 1 || !strings.Contains(errOut, "has no columns") {
		t.Errorf("bad catalog: exit %d %q", code, errOut)
	}
}

// Without --catalog, check reads the catalog of the backend in
// backend.dsn: here a throwaway cluster holding the demo's tables.
func TestCheckCommandBackend(t *testing.T) {
	c := testpg.Start(t)
	ctx := context.Background()
	if err := c.CreateDatabase(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	if err := c.Exec(ctx, "demo", `CREATE SCHEMA sales;
CREATE TABLE sales.orders (id integer, customer text, ssn text, email text, amount numeric(12,2), region text, order_date date)`); err != nil {
		t.Fatal(err)
	}
	root := testrepo.Root(t)
	cfg := writeFile(t, t.TempDir(), "pgranger.toml", `
[backend]
dsn = "`+c.SuperDSN("demo")+`"
[[identity.users]]
name = "bob"
password = "bob"
groups = ["analysts"]
attributes = { region = "US" }
[policy.file]
policies = "`+filepath.Join(root, "examples", "policies", "hive.json")+`"
`)
	code, out, errOut := runCLI("check", "--config", cfg, "--user", "bob", "--search-path", "sales", "SELECT amount FROM orders")
	if code != 0 || !strings.Contains(out, "    select amount: allowed by policy 1\n") || !strings.Contains(out, "FROM sales.orders WHERE region = 'US'") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}

// The statements that crashed pgranger (check among them) are refused
// with 54001 for a user with no access to anything: by the scan before
// the parser sees them, by the tree's depth before anything deparses it,
// or by listen.max-nesting-depth.
func TestCheckCommandRefusesDeepStatements(t *testing.T) {
	root := testrepo.Root(t)
	cfg := filepath.Join(root, "examples", "pgranger.toml")
	cat := filepath.Join(root, "examples", "policies", "decisions.yaml")
	lim := sqlrewrite.CurrentNestingLimits()
	if lim.TextLevels >= 50000 {
		t.Skipf("a %d-byte C stack lets the parser have these statements", lim.StackBytes)
	}
	rep := strings.Repeat
	tooDeep := func(what string) string {
		return "statement is nested too deeply to analyse safely: " + what + "; " + lim.Allowed()
	}
	plus := tooDeep("its parse tree is 9,611 levels deep (4,800 operators on one path)")
	if lim.TextLevels < 9634 {
		plus = tooDeep("4,800 operators on one path could make its parse tree 9,634 levels deep")
	}
	for _, c := range []struct{ name, sql, msg string }{
		{"4,800 + terms", "SELECT abs(1)" + rep(" + 1", 4800), plus},
		{"30,000 OPERATOR(+)", "SELECT 1" + rep(" OPERATOR(pg_catalog.+) 1", 30000),
			tooDeep("30,000 operators on one path could make its parse tree 60,030 levels deep")},
		{"30,000 CROSS JOINs", "SELECT 1 FROM sales.orders" + rep(" CROSS JOIN sales.orders", 30000),
			tooDeep("30,000 joins on one path could make its parse tree 60,030 levels deep")},
		{"50,000 UNION ALL", "SELECT 1" + rep(" UNION ALL SELECT 1", 50000),
			tooDeep("50,000 UNION, INTERSECT or EXCEPT branches on one path could make its parse tree 50,030 levels deep")},
		{"2,000 nested CASE", "SELECT " + rep("CASE WHEN true THEN ", 2000) + "1" + rep(" END", 2000),
			"statement nests parentheses, brackets or CASE expressions more than 1,000 deep (listen.max-nesting-depth)"},
	} {
		code, out, errOut := runCLI("check", "--config", cfg, "--catalog", cat, "--user", "mallory", c.sql)
		want := "result: denied\nERROR 54001: pgranger: " + c.msg + "\n"
		if code != 1 || !strings.HasSuffix(out, want) {
			t.Errorf("%s: exit %d, want 1 and output ending %q\n%.2000s%s", c.name, code, want, out, errOut)
		}
	}
}

// policy.mask-dialect = "spark": check says so, and the masks are Spark's
// under Kyuubi's plugin (a regexp_replace chain, md5, date_trunc).
func TestCheckCommandSparkDialect(t *testing.T) {
	root := testrepo.Root(t)
	t.Setenv("PGRANGER_POLICY__MASK_DIALECT", "spark")
	code, out, errOut := runCLI("check", "--config", filepath.Join(root, "examples", "pgranger.toml"),
		"--catalog", filepath.Join(root, "examples", "policies", "decisions.yaml"), "--user", "bob",
		"SELECT email, order_date FROM sales.orders")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"mask dialect: spark (Spark's mask results under Kyuubi's Ranger plugin; policy.mask-dialect)\n",
		`pg_catalog.md5(email::pg_catalog.text) COLLATE pg_catalog."default" AS email`,
		"pg_catalog.date_trunc('year', order_date::timestamp) AS order_date",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
