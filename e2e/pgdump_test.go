package e2e

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgranger/pgranger/internal/testpg"
)

// A masked pg_dump (docs/clients.md "pg_dump: a masked dump"): the real
// pg_dump of the test cluster's PostgreSQL runs through pgranger as a
// governed user, its dump is restored with psql into a fresh database, and
// every table there holds exactly what the user SELECTs through pgranger.

// dumpFixtureSQL is schema dumpme: masks, row filters, a partitioned
// table, a view, sequences (serial and identity), an enum, a foreign key,
// a table with a denied column (staff.salary) and one the user may not
// read at all (secret). Every order and event is in its customer's
// region, so a filtered dump restores with its foreign key.
const dumpFixtureSQL = `
CREATE SCHEMA dumpme;
CREATE TYPE dumpme.mood AS ENUM ('ok', 'sad');
CREATE TABLE dumpme.customers (
    id serial PRIMARY KEY,
    name text NOT NULL,
    ssn text,
    email varchar(80),
    region text NOT NULL,
    born date,
    mood dumpme.mood,
    tags text[],
    note text
);
COMMENT ON TABLE dumpme.customers IS 'dump fixture';
INSERT INTO dumpme.customers (name, ssn, email, region, born, mood, tags, note) VALUES
    ('Ann Archer', '123-45-6789', 'ann@example.com', 'US', '1990-05-17', 'ok', '{a,b}', E'tab\there'),
    ('Ben Brook', '987-65-4321', 'ben@example.com', 'EU', '1985-01-02', 'sad', NULL, 'DUMP-EU-NOTE'),
    ('Cid Crane', NULL, NULL, 'US', NULL, NULL, '{}', E'line1\nline2 \\ back'),
    ('Dee Dale', '555-12-3456', 'dee@example.com', 'EU', '2001-12-31', 'ok', '{x}', NULL);
CREATE TABLE dumpme.orders (
    id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_id int NOT NULL REFERENCES dumpme.customers (id),
    amount numeric(10,2) CHECK (amount >= 0),
    region text NOT NULL,
    memo text
);
CREATE INDEX orders_customer_idx ON dumpme.orders (customer_id);
INSERT INTO dumpme.orders (customer_id, amount, region, memo) VALUES
    (1, 10.00, 'US', 'first'), (2, 20.00, 'EU', 'DUMP-EU-ORDER'), (3, 0.50, 'US', NULL), (4, 7.25, 'EU', 'eu');
CREATE TABLE dumpme.events (id int, region text NOT NULL, at timestamptz, payload text) PARTITION BY LIST (region);
CREATE TABLE dumpme.events_us PARTITION OF dumpme.events FOR VALUES IN ('US');
CREATE TABLE dumpme.events_eu PARTITION OF dumpme.events FOR VALUES IN ('EU');
INSERT INTO dumpme.events VALUES (1, 'US', '2024-01-01 10:00:00+00', 'us event'), (2, 'EU', '2024-01-02 10:00:00+00', 'DUMP-EU-EVENT');
CREATE VIEW dumpme.customer_names AS SELECT id, name FROM dumpme.customers;
CREATE TABLE dumpme.staff (id int PRIMARY KEY, name text, salary int);
INSERT INTO dumpme.staff VALUES (1, 'Sam', 123456);
CREATE TABLE dumpme.secret (id int, v text);
INSERT INTO dumpme.secret VALUES (1, 'DUMP-TOPSECRET');
GRANT USAGE ON SCHEMA dumpme TO pgranger_svc;
GRANT SELECT ON ALL TABLES IN SCHEMA dumpme TO pgranger_svc;
GRANT SELECT ON ALL SEQUENCES IN SCHEMA dumpme TO pgranger_svc;
`

var (
	dumpFixtureOnce sync.Once
	dumpFixtureErr  error
)

// dumpFixture creates schema dumpme once per run.
func dumpFixture(t *testing.T) {
	t.Helper()
	requireCluster(t)
	dumpFixtureOnce.Do(func() {
		dumpFixtureErr = cluster.Exec(context.Background(), "demo", dumpFixtureSQL)
	})
	if dumpFixtureErr != nil {
		t.Fatal(dumpFixtureErr)
	}
}

// dumpPolicies add to the demo bundle: analysts (bob, US) and support
// (carol, EU) may select dumpme's tables, view and sequences but not
// secret (no policy) nor staff.salary (denied); ssn, email and born are
// masked for everyone; customers, orders and events are filtered by
// region.
func dumpPolicies(t *testing.T) policyDoc {
	doc := demoPolicies(t)
	groups := []string{"analysts", "support"}
	access := accessPolicy(960, "dumpme", "customers", "*", groups)
	access["resources"].(map[string]any)["table"] = map[string]any{"values": []string{"customers", "orders", "events", "customer_names", "staff", "*_seq"}}
	doc.add(access)
	deny := accessPolicy(961, "dumpme", "staff", "salary", nil)
	deny["policyItems"] = []any{}
	deny["denyPolicyItems"] = []any{accessItem(groups, "select")}
	doc.add(deny)
	doc.add(maskPolicy(962, "dumpme", "customers", "ssn", []string{"public"}, "MASK_SHOW_LAST_4", ""))
	doc.add(maskPolicy(963, "dumpme", "customers", "email", []string{"public"}, "MASK_HASH", ""))
	doc.add(maskPolicy(964, "dumpme", "customers", "born", []string{"public"}, "MASK_DATE_SHOW_YEAR", ""))
	for i, table := range []string{"customers", "orders", "events"} {
		doc.add(rowFilterPolicy(965+i, "dumpme", table, groups, "region = '${{USER.region}}'"))
	}
	return doc
}

// pgDumpBin is pg_dump of the cluster's PostgreSQL (same major version).
func pgDumpBin(t *testing.T, name string) string {
	t.Helper()
	dir, err := testpg.BinDir()
	if err != nil {
		t.Skip(err)
	}
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("skipping: %s not installed beside the server (%v)", name, err)
	}
	return path
}

// pgDump runs pg_dump through p as user (password = user name, passed as
// PGPASSWORD) on database demo.
func pgDump(t *testing.T, p *proxy, user string, args ...string) clientRun {
	t.Helper()
	host, port, err := net.SplitHostPort(p.addr)
	if err != nil {
		t.Fatal(err)
	}
	argv := append([]string{"-h", host, "-p", port, "-U", user, "--no-password"}, args...)
	argv = append(argv, "demo")
	return runClient(t, 2*time.Minute, "", []string{"PGPASSWORD=" + user, "PGCONNECT_TIMEOUT=10", "LC_ALL=C"}, pgDumpBin(t, "pg_dump"), argv...)
}

// freshDatabase creates an empty database on the test cluster.
func freshDatabase(t *testing.T, name string) {
	t.Helper()
	if err := cluster.CreateDatabase(context.Background(), name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cluster.Exec(context.Background(), "postgres", "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	})
}

// restore runs a plain-format dump with psql as the superuser into db,
// stopping at the first error.
func restore(t *testing.T, db, dump string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "dump.sql")
	if err := os.WriteFile(file, []byte(dump), 0o600); err != nil {
		t.Fatal(err)
	}
	run := runClient(t, 2*time.Minute, "", []string{"LC_ALL=C"}, pgDumpBin(t, "psql"),
		"-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", cluster.SuperDSN(db), "-f", file)
	if run.err != nil {
		t.Fatalf("restoring into %s: %v\n%s", db, run.err, run.stderr)
	}
}

func superConnTo(t *testing.T, db string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), cluster.SuperDSN(db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// tableText is a table's rows as text (the whole row cast to text), sorted.
func tableText(t *testing.T, conn *pgx.Conn, table string) []string {
	t.Helper()
	return rows(t, conn, "SELECT x::text FROM "+table+" x ORDER BY 1")
}

// restoredTables are the tables (and partitioned tables) of schema dumpme
// in a restored database.
func restoredTables(t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	var out []string
	for _, name := range rows(t, conn, `SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'dumpme' AND c.relkind IN ('r', 'p') ORDER BY 1`) {
		out = append(out, "dumpme."+name)
	}
	return out
}

// sameAsThroughPgranger compares every restored table with what user
// SELECTs through pgranger, row for row as text; the tables in empty must
// be empty in the restored database instead (their data was not dumped).
func sameAsThroughPgranger(t *testing.T, restored, via *pgx.Conn, want []string, empty ...string) {
	t.Helper()
	tables := restoredTables(t, restored)
	equalLines(t, "restored tables", tables, want)
	for _, table := range tables {
		got := tableText(t, restored, table)
		if contains(empty, table) {
			equalLines(t, table+" (data not dumped)", got, nil)
			continue
		}
		equalLines(t, table+": restored against SELECT through pgranger", got, tableText(t, via, table))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// The dump flags a user with bob's access needs for schema dumpme: leave
// out the table he may not read, and the data of the table with a column
// he may not read.
var bobsDumpFlags = []string{"-n", "dumpme", "-T", "dumpme.secret", "--exclude-table-data=dumpme.staff"}

var bobsCustomers = []string{
	"(1,\"Ann Archer\",xxx-xx-6789," + sha256hex("ann@example.com") + ",US,1990-01-01,ok,\"{a,b}\",\"tab\there\")",
	"(3,\"Cid Crane\",,,US,,,{},\"line1\nline2 \\\\ back\")",
}

var allDumpTables = []string{"dumpme.customers", "dumpme.events", "dumpme.events_eu", "dumpme.events_us", "dumpme.orders", "dumpme.staff"}

// checkBobsRestore checks a database restored from bob's dump of dumpme:
// the exact masked and filtered rows, then every table against bob's
// SELECT through pgranger, the sequences, the view and the constraints.
func checkBobsRestore(t *testing.T, db string, p *proxy) {
	t.Helper()
	restored := superConnTo(t, db)
	via := connect(t, p, "bob")
	equalLines(t, "customers", tableText(t, restored, "dumpme.customers"), bobsCustomers)
	equalLines(t, "orders", rows(t, restored, "SELECT id, customer_id, amount, region, memo FROM dumpme.orders ORDER BY id"),
		[]string{"1|1|10.00|US|first", "3|3|0.50|US|NULL"})
	equalLines(t, "events", rows(t, restored, "SELECT tableoid::regclass, id, payload FROM dumpme.events ORDER BY id"),
		[]string{"dumpme.events_us|1|us event"})
	equalLines(t, "row counts", rows(t, restored, `SELECT (SELECT count(*) FROM dumpme.customers), (SELECT count(*) FROM dumpme.orders),
		(SELECT count(*) FROM dumpme.events), (SELECT count(*) FROM dumpme.staff)`), []string{"2|2|1|0"})
	sameAsThroughPgranger(t, restored, via, allDumpTables, "dumpme.staff")
	for _, seq := range []string{"dumpme.customers_id_seq", "dumpme.orders_id_seq"} {
		q := "SELECT last_value, is_called FROM " + seq
		equalLines(t, seq, rows(t, restored, q), rows(t, via, q))
		equalLines(t, seq, rows(t, restored, q), []string{"4|t"})
	}
	// The view reads the restored, masked table.
	equalLines(t, "view", rows(t, restored, "SELECT id, name FROM dumpme.customer_names ORDER BY id"), []string{"1|Ann Archer", "3|Cid Crane"})
	equalLines(t, "constraints", rows(t, restored, `SELECT conname FROM pg_catalog.pg_constraint
		WHERE connamespace = 'dumpme'::regnamespace ORDER BY 1`),
		[]string{"customers_pkey", "orders_amount_check", "orders_customer_id_fkey", "orders_pkey", "staff_pkey"})
}

// noRawValues checks a dump for the stored values bob's policies hide.
func noRawValues(t *testing.T, what, dump string) {
	t.Helper()
	for _, raw := range []string{"123-45-6789", "ann@example.com", "1990-05-17", "DUMP-EU", "Ben Brook", "DUMP-TOPSECRET", "123456"} {
		if strings.Contains(dump, raw) {
			t.Errorf("%s holds %q", what, raw)
		}
	}
}

// pg_dump -n: schema and data, restored into a fresh database.
func TestPgDumpSchemaWithData(t *testing.T) {
	dumpFixture(t)
	p := startProxy(t, proxyOptions{policies: dumpPolicies(t).bytes(t)})
	run := pgDump(t, p, "bob", bobsDumpFlags...)
	if run.err != nil {
		t.Fatalf("pg_dump: %v\n%s\n%s", run.err, run.stderr, p.log())
	}
	noRawValues(t, "bob's dump", run.stdout)
	freshDatabase(t, "dump_full")
	restore(t, "dump_full", run.stdout)
	checkBobsRestore(t, "dump_full", p)
}

// pg_dump --load-via-partition-root copies each partition (COPY of the
// leaf, read under the root's policies) and loads it through the root.
func TestPgDumpLoadViaPartitionRoot(t *testing.T) {
	dumpFixture(t)
	p := startProxy(t, proxyOptions{policies: dumpPolicies(t).bytes(t)})
	run := pgDump(t, p, "bob", append([]string{"--load-via-partition-root"}, bobsDumpFlags...)...)
	if run.err != nil {
		t.Fatalf("pg_dump --load-via-partition-root: %v\n%s\n%s", run.err, run.stderr, p.log())
	}
	if !strings.Contains(run.stdout, "-- Data for Name: events_us; Type: TABLE DATA; Schema: dumpme") ||
		!strings.Contains(run.stdout, "COPY dumpme.events (id, region, at, payload) FROM stdin;\n1\tUS\t") {
		t.Errorf("the dump does not load events_us's rows through dumpme.events:\n%s", run.stdout)
	}
	noRawValues(t, "bob's dump", run.stdout)
	freshDatabase(t, "dump_via_root")
	restore(t, "dump_via_root", run.stdout)
	checkBobsRestore(t, "dump_via_root", p)
}

// pg_dump --schema-only restores empty tables; pg_dump --data-only fills
// them with the masked rows.
func TestPgDumpSchemaOnlyThenDataOnly(t *testing.T) {
	dumpFixture(t)
	p := startProxy(t, proxyOptions{policies: dumpPolicies(t).bytes(t)})
	schema := pgDump(t, p, "bob", append([]string{"--schema-only"}, bobsDumpFlags...)...)
	if schema.err != nil {
		t.Fatalf("pg_dump --schema-only: %v\n%s", schema.err, schema.stderr)
	}
	if strings.Contains(schema.stdout, "COPY ") || strings.Contains(schema.stdout, "Ann Archer") {
		t.Errorf("a schema-only dump holds data:\n%s", schema.stdout)
	}
	freshDatabase(t, "dump_split")
	restore(t, "dump_split", schema.stdout)
	restored := superConnTo(t, "dump_split")
	equalLines(t, "tables after --schema-only", restoredTables(t, restored), allDumpTables)
	equalLines(t, "rows after --schema-only", rows(t, restored, `SELECT (SELECT count(*) FROM dumpme.customers) + (SELECT count(*) FROM dumpme.orders)
		+ (SELECT count(*) FROM dumpme.events) + (SELECT count(*) FROM dumpme.staff)`), []string{"0"})

	data := pgDump(t, p, "bob", append([]string{"--data-only"}, bobsDumpFlags...)...)
	if data.err != nil {
		t.Fatalf("pg_dump --data-only: %v\n%s", data.err, data.stderr)
	}
	if strings.Contains(data.stdout, "CREATE TABLE") {
		t.Errorf("a data-only dump holds definitions:\n%s", data.stdout)
	}
	noRawValues(t, "bob's data-only dump", data.stdout)
	restore(t, "dump_split", data.stdout)
	checkBobsRestore(t, "dump_split", p)
}

// pg_dump -t: one table, dumped by carol (EU rows), into a database that
// has its schema and type.
func TestPgDumpTable(t *testing.T) {
	dumpFixture(t)
	p := startProxy(t, proxyOptions{policies: dumpPolicies(t).bytes(t)})
	run := pgDump(t, p, "carol", "-t", "dumpme.customers")
	if run.err != nil {
		t.Fatalf("pg_dump -t: %v\n%s", run.err, run.stderr)
	}
	freshDatabase(t, "dump_table")
	if err := cluster.Exec(context.Background(), "dump_table", "CREATE SCHEMA dumpme; CREATE TYPE dumpme.mood AS ENUM ('ok', 'sad')"); err != nil {
		t.Fatal(err)
	}
	restore(t, "dump_table", run.stdout)
	restored := superConnTo(t, "dump_table")
	equalLines(t, "tables", restoredTables(t, restored), []string{"dumpme.customers"})
	equalLines(t, "carol's customers", rows(t, restored, "SELECT id, name, ssn, email, region, born, note FROM dumpme.customers ORDER BY id"), []string{
		"2|Ben Brook|xxx-xx-4321|" + sha256hex("ben@example.com") + "|EU|1985-01-01|DUMP-EU-NOTE",
		"4|Dee Dale|xxx-xx-3456|" + sha256hex("dee@example.com") + "|EU|2001-01-01|NULL",
	})
	sameAsThroughPgranger(t, restored, connect(t, p, "carol"), []string{"dumpme.customers"})
	equalLines(t, "sequence", rows(t, restored, "SELECT last_value FROM dumpme.customers_id_seq"), []string{"4"})
}

// A parallel directory-format dump (pg_dump -Fd -j 2, whose workers set
// client_encoding and import the leader's snapshot) restored with
// pg_restore holds the same rows.
func TestPgDumpParallelDirectory(t *testing.T) {
	dumpFixture(t)
	p := startProxy(t, proxyOptions{policies: dumpPolicies(t).bytes(t)})
	dir := filepath.Join(t.TempDir(), "dump")
	run := pgDump(t, p, "bob", append([]string{"-Fd", "-j", "2", "-f", dir}, bobsDumpFlags...)...)
	if run.err != nil {
		t.Fatalf("pg_dump -Fd -j 2: %v\n%s", run.err, run.stderr)
	}
	freshDatabase(t, "dump_parallel")
	res := runClient(t, 2*time.Minute, "", []string{"LC_ALL=C"}, pgDumpBin(t, "pg_restore"),
		"--exit-on-error", "-d", cluster.SuperDSN("dump_parallel"), dir)
	if res.err != nil {
		t.Fatalf("pg_restore: %v\n%s", res.err, res.stderr)
	}
	checkBobsRestore(t, "dump_parallel", p)
}

// A table the user may not read at all stops pg_dump at its LOCK with
// pgranger's denial, before anything is dumped; a table with a column the
// user may not read stops it at that table's COPY. Both name the user, the
// table (and column) and the access.
func TestPgDumpDeniedTable(t *testing.T) {
	dumpFixture(t)
	p := startProxy(t, proxyOptions{policies: dumpPolicies(t).bytes(t)})
	run := pgDump(t, p, "bob", "-n", "dumpme")
	if run.err == nil {
		t.Fatalf("pg_dump of a schema with a table bob may not read succeeded:\n%s", run.stdout)
	}
	for _, want := range []string{
		`ERROR:  pgranger: permission denied: user "bob" has no select access to table dumpme.secret`,
		"DETAIL:  Ranger resource database=dumpme, table=secret: no policy grants select",
		"Query was: LOCK TABLE dumpme.secret IN ACCESS SHARE MODE",
	} {
		if !strings.Contains(run.stderr, want) {
			t.Errorf("pg_dump's error lacks %q:\n%s", want, run.stderr)
		}
	}
	if strings.Contains(run.stdout, "CREATE TABLE") || strings.Contains(run.stdout, "COPY ") {
		t.Errorf("pg_dump wrote a partial dump:\n%s", run.stdout)
	}

	run = pgDump(t, p, "bob", "-n", "dumpme", "-T", "dumpme.secret")
	if run.err == nil {
		t.Fatalf("pg_dump of a table with a column bob may not read succeeded:\n%s", run.stdout)
	}
	for _, want := range []string{
		`ERROR:  pgranger: permission denied: user "bob" has no select access to column dumpme.staff.salary`,
		"DETAIL:  Ranger resource database=dumpme, table=staff, column=salary: denied by policy 961",
		"Query was: COPY dumpme.staff (id, name, salary) TO stdout;",
	} {
		if !strings.Contains(run.stderr, want) {
			t.Errorf("pg_dump's error lacks %q:\n%s", want, run.stderr)
		}
	}
	noRawValues(t, "the failed dump", run.stdout)

	// Large objects are not governed: a dump that includes them (-b, and
	// a whole-database dump without -B) is refused at their catalog.
	run = pgDump(t, p, "bob", append([]string{"-b"}, bobsDumpFlags...)...)
	if run.err == nil || !strings.Contains(run.stderr, `pgranger: reading pg_catalog.pg_largeobject_metadata is not allowed through pgranger (large objects are not governed; user "bob")`) {
		t.Errorf("a dump with large objects: %v\n%s", run.err, run.stderr)
	}
}

// LOCK through pgranger: ACCESS SHARE on a table the user may select is
// taken on the backend; every other mode, and a table without select
// access, is refused with 42501 and takes nothing.
func TestLockAccessShareOnly(t *testing.T) {
	dumpFixture(t)
	p := startProxy(t, proxyOptions{policies: dumpPolicies(t).bytes(t)})
	conn := connect(t, p, "bob")
	super := superConnTo(t, "demo")
	heldBy := func() []string {
		return rows(t, super, `SELECT l.mode FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
			WHERE l.relation = 'dumpme.customers'::regclass AND a.usename = 'pgranger_svc' AND l.granted ORDER BY 1`)
	}
	rows(t, conn, "BEGIN")
	rows(t, conn, "LOCK TABLE dumpme.customers IN ACCESS SHARE MODE")
	equalLines(t, "locks held while bob's transaction is open", heldBy(), []string{"AccessShareLock"})
	rows(t, conn, "COMMIT")
	equalLines(t, "locks held after COMMIT", heldBy(), nil)

	for _, c := range []struct{ sql, msg string }{
		{"LOCK TABLE dumpme.customers IN EXCLUSIVE MODE", `pgranger: LOCK … IN EXCLUSIVE MODE is not allowed through pgranger; only ACCESS SHARE MODE, on tables the user may select (user "bob")`},
		{"LOCK dumpme.customers", `pgranger: LOCK … IN ACCESS EXCLUSIVE MODE is not allowed through pgranger; only ACCESS SHARE MODE, on tables the user may select (user "bob")`},
		{"LOCK TABLE dumpme.customers, dumpme.secret IN ACCESS SHARE MODE", `pgranger: permission denied: user "bob" has no select access to table dumpme.secret`},
		{"LOCK TABLE pg_catalog.pg_authid IN ACCESS SHARE MODE", `pgranger: LOCK of pg_catalog.pg_authid is not allowed through pgranger: catalog relations are not locked by clients (user "bob")`},
	} {
		rows(t, conn, "BEGIN")
		_, err := tryRows(conn, c.sql)
		if sqlstate(err) != "42501" || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: err = %v, want 42501 %s", c.sql, err, c.msg)
		}
		equalLines(t, c.sql+": locks held", heldBy(), nil)
		rows(t, conn, "ROLLBACK")
	}
}

// pg_dump's transaction, statement for statement: REPEATABLE READ, READ
// ONLY, the table locked, then COPY … TO stdout of every column — bob's
// masked, filtered rows, in COPY's text format.
func TestPgDumpTransactionCopy(t *testing.T) {
	dumpFixture(t)
	p := startProxy(t, proxyOptions{policies: dumpPolicies(t).bytes(t)})
	conn := connect(t, p, "bob")
	exec := func(sql string) {
		if _, err := conn.PgConn().Exec(context.Background(), sql).ReadAll(); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	for _, sql := range []string{"SELECT pg_catalog.set_config('search_path', '', false);", "SET row_security = off",
		"BEGIN", "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", "LOCK TABLE dumpme.customers IN ACCESS SHARE MODE"} {
		exec(sql)
	}
	var out strings.Builder
	if _, err := conn.PgConn().CopyTo(context.Background(), &out, "COPY dumpme.customers (id, name, ssn, email, region, born, mood, tags, note) TO stdout;"); err != nil {
		t.Fatal(err)
	}
	want := "1\tAnn Archer\txxx-xx-6789\t" + sha256hex("ann@example.com") + "\tUS\t1990-01-01\tok\t{a,b}\ttab\\there\n" +
		"3\tCid Crane\t\\N\t\\N\tUS\t\\N\t\\N\t{}\tline1\\nline2 \\\\ back\n"
	if out.String() != want {
		t.Errorf("COPY in pg_dump's transaction:\n got %q\nwant %q", out.String(), want)
	}
	equalLines(t, "the transaction", rows(t, conn, "SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only')"),
		[]string{"repeatable read|on"})
	exec("COMMIT")
}

// set_config('search_path', …, false) as pg_dump sends it is tracked like
// SET search_path, rolled back with its transaction; other set_config
// calls on search_path or protected settings are still refused.
func TestSetConfigSearchPath(t *testing.T) {
	dumpFixture(t)
	p := startProxy(t, proxyOptions{policies: dumpPolicies(t).bytes(t)})
	conn := connect(t, p, "bob")
	bobsSSNs := []string{"1|xxx-xx-6789", "3|NULL"}
	equalLines(t, "set_config result", rows(t, conn, "SELECT pg_catalog.set_config('search_path', 'dumpme', false)"), []string{"dumpme"})
	equalLines(t, "unqualified after set_config", rows(t, conn, "SELECT id, ssn FROM customers ORDER BY id"), bobsSSNs)
	rows(t, conn, "BEGIN")
	rows(t, conn, "SELECT set_config('search_path', '', false)")
	if _, err := tryRows(conn, "SELECT id FROM customers"); sqlstate(err) != "42P01" {
		t.Errorf("with an empty search_path: err = %v, want 42P01", err)
	}
	rows(t, conn, "ROLLBACK")
	equalLines(t, "after ROLLBACK", rows(t, conn, "SELECT id, ssn FROM customers ORDER BY id"), bobsSSNs)
	equalLines(t, "the backend's path", rows(t, conn, "SHOW search_path"), []string{"dumpme"})
	for _, c := range []struct{ sql, msg string }{
		{"SELECT set_config('search_path', 'mallory, pg_catalog', false)", `a search_path that puts pg_catalog after "mallory" is not allowed`},
		{"SELECT set_config('search_path', 'mallory', false) FROM dumpme.customers", "set_config on search_path is not allowed"},
		{"SELECT set_config('role', 'postgres', false)", `set_config on role is not allowed through pgranger; use SET (user "bob")`},
		{"SELECT set_config(name, 'postgres', false) FROM pg_settings WHERE name = 'session_authorization'", "set_config on session_authorization is not allowed"},
	} {
		if _, err := tryRows(conn, c.sql); sqlstate(err) != "42501" || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: err = %v, want 42501 %s", c.sql, err, c.msg)
		}
	}
	equalLines(t, "the backend's path after the refusals", rows(t, conn, "SHOW search_path"), []string{"dumpme"})
	equalLines(t, "the role", rows(t, conn, "SELECT current_setting('role')"), []string{"none"})
}
