package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// psql runs the real psql client through the demo proxy and returns its
// stdout and stderr (unaligned, tuples only, no psqlrc).
func psql(t *testing.T, user string, args ...string) (string, string, error) {
	t.Helper()
	requireCluster(t)
	path, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("skipping: psql not installed (make test installs postgresql-client)")
	}
	cmd := exec.Command(path, append([]string{"-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", demoProxy.dsn(user, user)}, args...)...)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10", "LC_ALL=C")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return strings.TrimRight(stdout.String(), "\n"), stderr.String(), err
}

func TestPsqlMaskedOutput(t *testing.T) {
	out, errOut, err := psql(t, "bob", "-c", "SELECT id, ssn, email, amount FROM sales.orders ORDER BY id")
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, errOut)
	}
	want := strings.Join([]string{
		"1|xxx-xx-1111|b5fc85e55755f9e0d030a10ab4429b6b2944855f9a0d60077fe832becbc41d72|1200.50",
		"3|xxx-xx-3333|" + sha256hex("grace@example.com") + "|4410.25",
		"5|xxx-xx-5555|" + sha256hex("barbara@example.com") + "|1780.00",
	}, "\n")
	if out != want {
		t.Errorf("psql output:\n%s\nwant:\n%s", out, want)
	}
}

func TestPsqlMultiStatementWithDeniedSecondStatement(t *testing.T) {
	// One denial rejects the whole string before anything runs.
	out, errOut, err := psql(t, "carol", "-c", "SELECT 'first ran'; SELECT name FROM hr.employees")
	if err == nil {
		t.Fatal("psql should fail")
	}
	if strings.Contains(out, "first ran") {
		t.Errorf("the first statement ran although the second was denied: %q", out)
	}
	if !strings.Contains(errOut, "ERROR:  pgranger: permission denied") || !strings.Contains(errOut, "hr.employees") {
		t.Errorf("stderr = %q", errOut)
	}
}

func TestPsqlDescribe(t *testing.T) {
	// psql's catalog queries pass (pg_catalog is not governed by Ranger).
	out, errOut, err := psql(t, "bob", "-c", `\d sales.orders`)
	if err != nil {
		t.Fatalf("\\d: %v\n%s", err, errOut)
	}
	for _, col := range []string{"id|integer", "ssn|text", "amount|numeric(12,2)", "order_date|date"} {
		if !strings.Contains(out, col) {
			t.Errorf("\\d sales.orders lacks %q:\n%s", col, out)
		}
	}
	out, errOut, err = psql(t, "bob", "-c", `\dt sales.*`)
	if err != nil || !strings.Contains(out, "sales|orders|table|postgres") {
		t.Errorf("\\dt sales.*: %v\n%s%s", err, out, errOut)
	}
}

func TestPsqlSyntaxErrorIsTheParsersMessage(t *testing.T) {
	_, errOut, err := psql(t, "bob", "-c", "SELECT id FRM sales.orders")
	if err == nil || !strings.Contains(errOut, `ERROR:  syntax error at or near "sales"`) {
		t.Errorf("err = %v, stderr = %q", err, errOut)
	}
}

// psqlDSN runs psql against dsn (aligned output, so that a describe
// command is compared as a user sees it) with stdin as its input.
func psqlDSN(t *testing.T, dsn, stdin string, args ...string) (string, string, error) {
	t.Helper()
	requireCluster(t)
	path, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("skipping: psql not installed (make test installs postgresql-client)")
	}
	cmd := exec.Command(path, append([]string{"-X", "-v", "ON_ERROR_STOP=1", dsn}, args...)...)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10", "LC_ALL=C", "PAGER=", "COLUMNS=200")
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return stdout.String(), stderr.String(), err
}

// psql's describe commands through pgranger print exactly what they print
// on a direct connection (catalog queries are not governed): \d (the
// relations on the search path), \dt, \d sales.orders and \d+ (storage,
// statistics, indexes, access method).
func TestPsqlDescribeLikeDirect(t *testing.T) {
	direct := cluster.DSN("pgranger_svc", "pgranger_svc", "demo")
	for _, cmd := range []string{`\d`, `\dt sales.*`, `\d sales.orders`, `\d+ sales.orders`, `\dn`} {
		via, errVia, err := psqlDSN(t, demoProxy.dsn("bob", "bob"), "", "-c", cmd)
		if err != nil {
			t.Errorf("%s through pgranger: %v\n%s", cmd, err, errVia)
			continue
		}
		want, errDirect, err := psqlDSN(t, direct, "", "-c", cmd)
		if err != nil {
			t.Fatalf("%s directly: %v\n%s", cmd, err, errDirect)
		}
		if via != want {
			t.Errorf("%s through pgranger:\n%s\ndirectly:\n%s", cmd, via, want)
		}
	}
	// A sanity check of the direct output itself.
	out, _, _ := psqlDSN(t, direct, "", "-c", `\d+ sales.orders`)
	for _, s := range []string{`Table "sales.orders"`, "ssn        | text", `"orders_pkey" PRIMARY KEY, btree (id)`, "Access method: heap"} {
		if !strings.Contains(out, s) {
			t.Errorf(`\d+ sales.orders lacks %q:`+"\n%s", s, out)
		}
	}
}

// \copy both ways, with files and with psql's standard input: rows into a
// table bob may write, read back with \copy … TO; a governed table comes
// out masked and filtered; \copy into sales.orders is denied.
func TestPsqlCopyBothWays(t *testing.T) {
	p := writerProxy(t, "psql ")
	dir := t.TempDir()
	in := dir + "/in.csv"
	if err := os.WriteFile(in, []byte("psql file a\n\"psql file, quoted\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, orders := dir+"/out.csv", dir+"/orders.txt"
	_, errOut, err := psqlAt(t, p, "bob", "psql stdin a\npsql stdin b\n\\.\n",
		"-c", `\copy mallory.loot (v) FROM '`+in+`' WITH (FORMAT csv)`,
		"-c", `\copy mallory.loot (v) FROM pstdin`,
		"-c", `\copy (SELECT v FROM mallory.loot WHERE starts_with(v, 'psql ') ORDER BY v COLLATE "C") TO '`+out+`' WITH (FORMAT csv)`,
		"-c", `\copy sales.orders (id, ssn, email) TO '`+orders+`'`)
	if err != nil {
		t.Fatalf("psql \\copy: %v\n%s", err, errOut)
	}
	written := []string{"psql file a", "psql file, quoted", "psql stdin a", "psql stdin b"}
	equalLines(t, "mallory.loot", lootRows(t, "psql "), written)
	if b, _ := os.ReadFile(out); string(b) != "psql file a\n\"psql file, quoted\"\npsql stdin a\npsql stdin b\n" {
		t.Errorf("\\copy (query) TO a file: %q", b)
	}
	var want strings.Builder
	for _, o := range bobsOrders(storedOrders(t)) {
		fmt.Fprintf(&want, "%d\t%s\t%s\n", o.id, maskShowLast4(o.ssn), maskHash(o.email))
	}
	if b, _ := os.ReadFile(orders); string(b) != want.String() {
		t.Errorf("\\copy sales.orders TO a file:\n%s\nwant:\n%s", b, want.String())
	}
	_, errOut, err = psqlAt(t, p, "bob", "", "-c", `\copy sales.orders (id, customer, region) FROM '`+in+`'`)
	if err == nil || !strings.Contains(errOut, `has no update access to table sales.orders`) {
		t.Errorf("\\copy into sales.orders: %v %s", err, errOut)
	}
}

// Several statements in one string (one simple Query, one implicit
// transaction): all results are shown; a failing statement takes the
// writes before it back, as PostgreSQL does.
func TestPsqlMultiStatementString(t *testing.T) {
	p := writerProxy(t, "psql ")
	out, errOut, err := psqlAt(t, p, "bob", "", "-c",
		"INSERT INTO mallory.loot VALUES ('psql multi 1'); SELECT ssn FROM sales.orders WHERE id = 3; "+
			"UPDATE mallory.loot SET v = v || '!' WHERE v = 'psql multi 1' RETURNING v; SELECT count(*) FROM mallory.loot WHERE starts_with(v, 'psql ')")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	// Command tags too, as psql prints them directly.
	if want := "INSERT 0 1\nxxx-xx-3333\npsql multi 1!\nUPDATE 1\n1"; out != want {
		t.Errorf("multi-statement string: %q, want %q", out, want)
	}
	_, errOut, err = psqlAt(t, p, "bob", "", "-c", "INSERT INTO mallory.loot VALUES ('psql multi 2'); SELECT 1/0")
	// The message of a data exception in a governed statement is
	// sanitized (docs/clients.md); the SQLSTATE is PostgreSQL's.
	if err == nil || !strings.Contains(errOut, "(SQLSTATE 22012)") {
		t.Errorf("multi-statement string with a failing statement: %v %s", err, errOut)
	}
	equalLines(t, "mallory.loot", lootRows(t, "psql "), []string{"psql multi 1!"})
}

// A script with a transaction and a denied statement in it: with
// ON_ERROR_ROLLBACK psql wraps each statement in a savepoint, so the
// denial is taken back and the rest commits; without it the transaction
// is aborted (25P02) and COMMIT rolls it back — as on a direct connection.
func TestPsqlOnErrorRollback(t *testing.T) {
	p := writerProxy(t, "psql ")
	script := func(tag string) string {
		return "BEGIN;\n" +
			"INSERT INTO mallory.loot VALUES ('psql " + tag + " 1');\n" +
			"SELECT salary FROM hr.employees;\n" +
			"INSERT INTO mallory.loot SELECT 'psql " + tag + " ' || ssn FROM sales.orders WHERE id = 5;\n" +
			"COMMIT;\n"
	}
	out, errOut, err := psqlAt(t, p, "bob", script("oer"), "-v", "ON_ERROR_STOP=0", "-v", "ON_ERROR_ROLLBACK=on", "-f", "-")
	if err != nil {
		t.Fatalf("ON_ERROR_ROLLBACK: %v\n%s", err, errOut)
	}
	if strings.Count(errOut, "ERROR:") != 1 || !strings.Contains(errOut, "no select access to column hr.employees.salary") {
		t.Errorf("ON_ERROR_ROLLBACK stderr:\n%s", errOut)
	}
	equalLines(t, "mallory.loot after ON_ERROR_ROLLBACK", lootRows(t, "psql "), []string{"psql oer 1", "psql oer xxx-xx-5555"})
	if out != "BEGIN\nINSERT 0 1\nINSERT 0 1\nCOMMIT" {
		t.Errorf("ON_ERROR_ROLLBACK output: %q", out)
	}

	_, errOut, err = psqlAt(t, p, "bob", script("abort"), "-v", "ON_ERROR_STOP=0", "-f", "-")
	if err != nil {
		t.Fatalf("without ON_ERROR_ROLLBACK: %v\n%s", err, errOut)
	}
	if !strings.Contains(errOut, "no select access to column hr.employees.salary") || !strings.Contains(errOut, "current transaction is aborted") {
		t.Errorf("without ON_ERROR_ROLLBACK stderr:\n%s", errOut)
	}
	equalLines(t, "mallory.loot after an aborted transaction", lootRows(t, "psql "), []string{"psql oer 1", "psql oer xxx-xx-5555"})
}
