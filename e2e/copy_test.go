package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgranger/pgranger/internal/interop"
)

// COPY … TO STDOUT reads through the same wrappers as a query: masked
// values, filtered rows, in text, CSV and binary formats.
func TestCopyToStdout(t *testing.T) {
	conn := connect(t, demoProxy, "bob")
	cases := []struct{ sql, want string }{
		{"COPY sales.orders (id, ssn) TO STDOUT", "1\txxx-xx-1111\n3\txxx-xx-3333\n5\txxx-xx-5555\n"},
		{"COPY (SELECT id, ssn, amount FROM sales.orders WHERE id > 1 ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER)", "id,ssn,amount\n3,xxx-xx-3333,4410.25\n5,xxx-xx-5555,1780.00\n"},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		if _, err := conn.PgConn().CopyTo(context.Background(), &buf, c.sql); err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if buf.String() != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.sql, buf.String(), c.want)
		}
	}
	var bin bytes.Buffer
	if _, err := conn.PgConn().CopyTo(context.Background(), &bin, "COPY (SELECT ssn FROM sales.orders WHERE id = 1) TO STDOUT WITH (FORMAT binary)"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(bin.Bytes(), []byte("xxx-xx-1111")) || bytes.Contains(bin.Bytes(), []byte("111-11-1111")) {
		t.Errorf("binary COPY: %q", bin.Bytes())
	}
	for _, sql := range []string{"COPY hr.employees (salary) TO STDOUT", "COPY sales.orders TO '/tmp/pgranger-x'", "COPY sales.orders FROM STDIN"} {
		if _, err := conn.PgConn().CopyTo(context.Background(), &bin, sql); sqlstate(err) != "42501" {
			t.Errorf("%s: err = %v, want 42501", sql, err)
		}
	}
}

func TestPsqlCopy(t *testing.T) {
	out, errOut, err := psql(t, "carol", "-c", `\copy (SELECT id, ssn, amount FROM sales.orders ORDER BY id) TO STDOUT WITH (FORMAT csv)`)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if want := "2,xxx-xx-2222,\n4,xxx-xx-4444,\n7,xxx-xx-7777,"; strings.TrimSpace(out) != want {
		t.Errorf("\\copy output:\n%s\nwant:\n%s", out, want)
	}
}

// copyFixtureSQL creates, in a schema, a partitioned table with a
// partitioned partition (ledger → ledger_us, ledger_rest → ledger_eu,
// ledger_apac) and a table with an inheritance child (base, base_child).
// In schema copyfix they hold copyFixtureRows and are filtered (region <>
// 'APAC') and masked (memo, MASK_SHOW_LAST_4) on their roots for analysts
// (copyPolicies); schema copyfix_ref holds what bob may see of them
// (copyFixture).
const copyFixtureSQL = `
CREATE SCHEMA %[1]s;
CREATE TABLE %[1]s.ledger (id int, region text, memo text, amount numeric(10,2)) PARTITION BY LIST (region);
CREATE TABLE %[1]s.ledger_us PARTITION OF %[1]s.ledger FOR VALUES IN ('US');
CREATE TABLE %[1]s.ledger_rest PARTITION OF %[1]s.ledger FOR VALUES IN ('EU', 'APAC') PARTITION BY LIST (region);
CREATE TABLE %[1]s.ledger_eu PARTITION OF %[1]s.ledger_rest FOR VALUES IN ('EU');
CREATE TABLE %[1]s.ledger_apac PARTITION OF %[1]s.ledger_rest FOR VALUES IN ('APAC');
CREATE TABLE %[1]s.base (id int, region text, memo text);
CREATE TABLE %[1]s.base_child (extra int) INHERITS (%[1]s.base);
GRANT USAGE ON SCHEMA %[1]s TO pgranger_svc;
GRANT SELECT ON ALL TABLES IN SCHEMA %[1]s TO pgranger_svc;
`

const copyFixtureRows = `
INSERT INTO copyfix.ledger VALUES
    (1, 'US', 'first memo', 10.50), (2, 'EU', 'Zweite Notiz', 20.00), (3, 'APAC', 'COPYFIX-HIDDEN-LEDGER', 30.00),
    (4, 'US', NULL, -1.25), (5, 'EU', E'tab\there', 5.00), (6, 'APAC', 'apac two', 0);
INSERT INTO copyfix.base VALUES (1, 'US', 'base one'), (2, 'APAC', 'COPYFIX-HIDDEN-BASE');
INSERT INTO copyfix.base_child VALUES (3, 'US', 'child three', 7), (4, 'APAC', 'COPYFIX-HIDDEN-CHILD', 8);
`

var (
	copyFixtureOnce sync.Once
	copyFixtureErr  error
)

// copyFixture creates schema copyfix and its reference copy copyfix_ref
// once per run. The reference holds the rows of copyfix that pass the
// filter, with memo masked by Hive's own mask UDF (the Hive oracle), in the
// same partitions and order: on it, PostgreSQL itself says what a COPY of
// bob's view of the data returns.
func copyFixture(t *testing.T) {
	t.Helper()
	requireCluster(t)
	copyFixtureOnce.Do(func() {
		// Until the end is reached (a failing oracle ends this goroutine),
		// the fixture is incomplete for every test that uses it.
		copyFixtureErr = errors.New("the copy fixture was not completed")
		ctx := context.Background()
		hive := interop.HiveForTest(t)
		sql := fmt.Sprintf(copyFixtureSQL, "copyfix") + copyFixtureRows + fmt.Sprintf(copyFixtureSQL, "copyfix_ref")
		if copyFixtureErr = cluster.Exec(ctx, "demo", sql); copyFixtureErr != nil {
			return
		}
		conn, err := pgx.Connect(ctx, cluster.SuperDSN("demo"))
		if err != nil {
			copyFixtureErr = err
			return
		}
		defer conn.Close(ctx)
		// ONLY base: base_child's rows go into the reference's child.
		for _, src := range []string{"copyfix.ledger", "ONLY copyfix.base", "copyfix.base_child"} {
			into := strings.Replace(strings.TrimPrefix(src, "ONLY "), "copyfix.", "copyfix_ref.", 1)
			rs, err := conn.Query(ctx, "SELECT * FROM "+src+" WHERE region <> 'APAC' ORDER BY id")
			if err != nil {
				copyFixtureErr = err
				return
			}
			all, err := pgx.CollectRows(rs, func(r pgx.CollectableRow) ([]any, error) { return r.Values() })
			if err != nil {
				copyFixtureErr = err
				return
			}
			var memos []string
			for _, row := range all {
				if memo, ok := row[2].(string); ok {
					memos = append(memos, memo)
				}
			}
			if len(memos) > 0 {
				masked := hiveMask(t, hive, "MASK_SHOW_LAST_4", "text", memos...)
				for _, row := range all {
					if _, ok := row[2].(string); ok {
						row[2], masked = masked[0], masked[1:]
					}
				}
			}
			for _, row := range all {
				marks := make([]string, len(row))
				for i := range row {
					marks[i] = fmt.Sprintf("$%d", i+1)
				}
				if _, err := conn.Exec(ctx, "INSERT INTO "+into+" VALUES ("+strings.Join(marks, ", ")+")", row...); err != nil {
					copyFixtureErr = err
					return
				}
			}
		}
		copyFixtureErr = nil
	})
	if copyFixtureErr != nil {
		t.Fatal(copyFixtureErr)
	}
}

// copyPolicies are the demo policies plus copyfix's: analysts (bob) read
// every table, ledger and base are filtered and masked on their roots.
func copyPolicies(t *testing.T) policyDoc {
	doc := demoPolicies(t)
	doc.add(accessPolicy(980, "copyfix", "*", "*", []string{"analysts"}))
	for i, table := range []string{"ledger", "base"} {
		doc.add(rowFilterPolicy(981+2*i, "copyfix", table, []string{"analysts"}, "region <> 'APAC'"))
		doc.add(maskPolicy(982+2*i, "copyfix", table, "memo", []string{"public"}, "MASK_SHOW_LAST_4", ""))
	}
	return doc
}

// COPY of a partitioned table through pgranger returns what
// COPY (SELECT * FROM t) TO STDOUT returns — every partition, filtered and
// masked under the root's policies — where PostgreSQL refuses the COPY
// (a partitioned table has no rows of its own; ONLY would read none). A
// partition, a table with inheritance children and a column list keep
// PostgreSQL's meaning. Every output is compared, byte for byte, with
// PostgreSQL's own COPY of the reference copy holding bob's rows and
// values, in text, CSV and binary, through pgx's CopyTo and psql.
func TestCopyPartitionedTable(t *testing.T) {
	copyFixture(t)
	p := startProxy(t, proxyOptions{policies: copyPolicies(t).bytes(t)})
	var seen capture
	conn := connectCapturing(t, p, "bob", &seen)
	super := superConnTo(t, "demo")
	copyOut := func(c *pgconn.PgConn, sql string) (string, error) {
		var buf bytes.Buffer
		_, err := c.CopyTo(context.Background(), &buf, sql)
		return buf.String(), err
	}
	ref := func(sql string) string {
		t.Helper()
		out, err := copyOut(super.PgConn(), strings.ReplaceAll(sql, "copyfix.", "copyfix_ref."))
		if err != nil {
			t.Fatalf("%s on the reference: %v", sql, err)
		}
		return out
	}
	// The rows partition by partition, in the order of their bounds
	// (ledger_rest's 'APAC', 'EU' before ledger_us's 'US'), memo masked as
	// Hive's MASK_SHOW_LAST_4 masks it (the mask keeps a tab, which COPY
	// escapes).
	ledgerText := "2\tEU\txxxxxx xotiz\t20.00\n5\tEU\txxx\\there\t5.00\n" +
		"1\tUS\txxxxx memo\t10.50\n4\tUS\t\\N\t-1.25\n"
	cases := []struct {
		sql  string  // through pgranger
		want string  // the same statement's PostgreSQL equivalent, run on the reference
		out  *string // the exact output, when spelled out
	}{
		{sql: "COPY copyfix.ledger TO STDOUT", want: "COPY (SELECT * FROM copyfix.ledger) TO STDOUT", out: &ledgerText},
		{sql: "COPY (SELECT * FROM copyfix.ledger) TO STDOUT", want: "COPY (SELECT * FROM copyfix.ledger) TO STDOUT", out: &ledgerText},
		{sql: "COPY copyfix.ledger (memo, id) TO STDOUT", want: "COPY (SELECT memo, id FROM copyfix.ledger) TO STDOUT"},
		{sql: "COPY copyfix.ledger TO STDOUT WITH (FORMAT csv, HEADER)", want: "COPY (SELECT * FROM copyfix.ledger) TO STDOUT WITH (FORMAT csv, HEADER)"},
		{sql: "COPY copyfix.ledger (id, amount) TO STDOUT WITH (FORMAT binary)", want: "COPY (SELECT id, amount FROM copyfix.ledger) TO STDOUT WITH (FORMAT binary)"},
		// A partition that is itself partitioned: every partition below it.
		{sql: "COPY copyfix.ledger_rest TO STDOUT", want: "COPY (SELECT * FROM copyfix.ledger_rest) TO STDOUT"},
		// Leaf partitions, as pg_dump copies them, under the root's policies.
		{sql: "COPY copyfix.ledger_us TO STDOUT", want: "COPY copyfix.ledger_us TO STDOUT", out: strp("1\tUS\txxxxx memo\t10.50\n4\tUS\t\\N\t-1.25\n")},
		{sql: "COPY copyfix.ledger_eu (id, region, memo, amount) TO stdout;", want: "COPY copyfix.ledger_eu (id, region, memo, amount) TO stdout;"},
		{sql: "COPY copyfix.ledger_apac TO STDOUT", want: "COPY copyfix.ledger_apac TO STDOUT", out: strp("")},
		// A table with an inheritance child: COPY reads the table's own
		// rows only, as in PostgreSQL; a query reads the child's too.
		{sql: "COPY copyfix.base TO STDOUT", want: "COPY copyfix.base TO STDOUT", out: strp("1\tUS\txxxx one\n")},
		{sql: "COPY (SELECT * FROM copyfix.base) TO STDOUT", want: "COPY (SELECT * FROM copyfix.base) TO STDOUT",
			out: strp("1\tUS\txxxx one\n3\tUS\txxxxx xhree\n")},
		{sql: "COPY copyfix.base_child TO STDOUT", want: "COPY copyfix.base_child TO STDOUT", out: strp("3\tUS\txxxxx xhree\t7\n")},
	}
	for _, c := range cases {
		got, err := copyOut(conn.PgConn(), c.sql)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if want := ref(c.want); got != want {
			t.Errorf("%s:\n got %q\nwant %q (PostgreSQL: %s on the reference)", c.sql, got, want, c.want)
		}
		if c.out != nil && got != *c.out {
			t.Errorf("%s:\n got %q\nwant %q", c.sql, got, *c.out)
		}
	}
	// PostgreSQL itself refuses COPY of a partitioned table; pgranger's
	// answer is the one its hint suggests.
	if _, err := copyOut(super.PgConn(), "COPY copyfix_ref.ledger TO STDOUT"); sqlstate(err) != "42809" || !strings.Contains(err.Error(), `cannot copy from partitioned table "ledger"`) {
		t.Errorf("COPY of a partitioned table on PostgreSQL: err = %v, want 42809", err)
	}
	// psql: COPY … TO STDOUT and \copy, the whole output.
	for _, cmd := range []string{`COPY copyfix.ledger TO STDOUT`, `\copy copyfix.ledger to stdout`, `\copy copyfix.ledger (memo, id) to stdout with (format csv)`} {
		out, errOut, err := psqlDSN(t, p.dsn("bob", "bob"), "", "-c", cmd)
		if err != nil {
			t.Errorf("psql %s: %v\n%s", cmd, err, errOut)
			continue
		}
		want := ledgerText
		if strings.Contains(cmd, "memo, id") {
			want = ref("COPY (SELECT memo, id FROM copyfix.ledger) TO STDOUT WITH (FORMAT csv)")
		}
		if out != want {
			t.Errorf("psql %s:\n got %q\nwant %q", cmd, out, want)
		}
	}
	if strings.Contains(seen.String(), "COPYFIX-HIDDEN") || strings.Contains(seen.String(), "apac two") {
		t.Errorf("a filtered row reached the client")
	}
}
