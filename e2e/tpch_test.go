package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgranger/pgranger/internal/interop"
	"github.com/pgranger/pgranger/internal/tpch"
)

// The TPC-H differential test (docs/performance.md, "TPC-H"): the 22
// queries through pgranger, as a user whose policies filter customer,
// orders and supplier and mask seven columns, return exactly what the same
// queries return directly on physical copies holding what that user may
// SELECT. The data (internal/tpch) lives in a database of its own, read by
// a service role of its own, tpch_svc, whose sessions log DDL statements
// (log_statement = 'ddl'), for the no-DDL check.

const (
	tpchScale    = 0.025 // about 150,000 lineitems
	tpchDB       = "tpch"
	tpchRole     = "tpch_svc"
	tpchUser     = "tpch_analyst"
	tpchTimeout  = 60 * time.Second // per query: generous, see TestTPCHGovernedMatchesCopies
	tpchLogTag   = "user=" + tpchRole + " "
	tpchLogPrefx = "%m [%p] user=%u db=%d "
)

var (
	tpchOnce sync.Once
	tpchErr  error
)

// tpchData loads the TPC-H database once per run.
func tpchData(t *testing.T) {
	t.Helper()
	requireCluster(t)
	tpchOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		start := time.Now()
		if tpchErr = cluster.CreateDatabase(ctx, tpchDB); tpchErr != nil {
			return
		}
		tpchErr = cluster.Exec(ctx, tpchDB, fmt.Sprintf(`CREATE ROLE %[1]s LOGIN PASSWORD '%[1]s';
			ALTER ROLE %[1]s SET log_statement = 'ddl'`, tpchRole))
		if tpchErr != nil {
			return
		}
		conn, err := pgx.Connect(ctx, cluster.SuperDSN(tpchDB))
		if err != nil {
			tpchErr = err
			return
		}
		defer conn.Close(ctx)
		tpchErr = tpch.Load(ctx, conn, tpchScale, tpchRole)
		t.Logf("TPC-H scale %g loaded in %s", tpchScale, time.Since(start).Round(time.Millisecond))
	})
	if tpchErr != nil {
		t.Fatalf("loading TPC-H: %v", tpchErr)
	}
}

// startTPCHProxy starts pgranger with the TPC-H policies in front of the
// tpch database, connecting as tpch_svc.
func startTPCHProxy(t *testing.T) *proxy {
	t.Helper()
	tpchData(t)
	return startProxy(t, proxyOptions{
		policies: tpch.Policies(),
		env: map[string]string{
			"PGRANGER_POLICY__SERVICE_NAME": tpch.ServiceName,
			"PGRANGER_BACKEND__DSN":         cluster.DSN(tpchRole, tpchRole, tpchDB),
		},
		extraConfig: fmt.Sprintf("[[identity.users]]\nname = %q\npassword = %q\ngroups = [%q]\n", tpchUser, tpchUser, tpch.Group),
	})
}

// tpchConn connects to the tpch database: through p as the governed user,
// or directly as the superuser when p is nil; search_path is schema.
func tpchConn(t *testing.T, p *proxy, schema string) *pgx.Conn {
	t.Helper()
	dsn := cluster.SuperDSN(tpchDB)
	if p != nil {
		dsn = fmt.Sprintf("postgres://%s:%s@%s/%s?sslmode=disable", tpchUser, tpchUser, p.addr, tpchDB)
	}
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(c, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	if err := tpch.UseSchema(c, conn, schema); err != nil {
		t.Fatal(err)
	}
	return conn
}

var tpchModes = []struct {
	name string
	mode pgx.QueryExecMode
}{
	{"simple", pgx.QueryExecModeSimpleProtocol},
	{"extended", pgx.QueryExecModeCacheStatement},
}

func runTPCH(conn *pgx.Conn, sql string, mode pgx.QueryExecMode) ([]string, time.Duration, error) {
	c, cancel := context.WithTimeout(context.Background(), tpchTimeout)
	defer cancel()
	start := time.Now()
	out, err := tpch.Run(c, conn, sql, mode)
	return out, time.Since(start), err
}

// TestTPCHGovernedMatchesCopies: every TPC-H query through pgranger, with
// the simple and the extended protocol, returns the rows and values
// (text, byte for byte, in order) the same query returns on the copies.
//
// Each query has tpchTimeout: while row-filtered tables are read through
// temporary security-barrier views, Q18 takes about 50 times as long
// through pgranger as on the copies (5 s at this scale): PostgreSQL joins
// the filtered orders and customer views in a nested loop with a join
// filter, every pair of their rows.
func TestTPCHGovernedMatchesCopies(t *testing.T) {
	t.Parallel() // its own proxy; the longest test, overlapped with the waiting ones
	p := startTPCHProxy(t)
	governed := tpchConn(t, p, tpch.Schema)
	direct := tpchConn(t, nil, tpch.CopySchema)
	tpchCopies(t, p, governed, direct)
	compareTPCH(t, "through pgranger", governed, direct)
}

var (
	copiesOnce sync.Once
	copiesErr  error
)

// tpchCopies builds the physical copies once per run, from what the
// governed user reads through p.
func tpchCopies(t *testing.T, p *proxy, governed, direct *pgx.Conn) {
	t.Helper()
	copiesOnce.Do(func() {
		c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		start := time.Now()
		if copiesErr = tpch.BuildCopies(c, governed, direct); copiesErr != nil {
			copiesErr = fmt.Errorf("building the copies: %w\n%s", copiesErr, p.log())
			return
		}
		t.Logf("copies built in %s", time.Since(start).Round(time.Millisecond))
		checkCopies(t, direct)
	})
	if copiesErr != nil {
		t.Fatal(copiesErr)
	}
}

// compareTPCH runs every query on the copies and on governed (through
// pgranger unless what says otherwise), with both protocols, and compares
// the results.
func compareTPCH(t *testing.T, what string, governed, direct *pgx.Conn) {
	t.Helper()
	for _, q := range tpch.Queries() {
		want, copyTime, err := runTPCH(direct, q.SQL, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatalf("%s on the copies: %v", q.Name, err)
		}
		// Every query selects rows, or the comparison would prove little.
		if len(want) < 2 {
			t.Errorf("%s returns no row on the copies", q.Name)
		}
		for _, m := range tpchModes {
			got, d, err := runTPCH(governed, q.SQL, m.mode)
			if err != nil {
				t.Errorf("%s %s (%s): %v", q.Name, what, m.name, err)
				continue
			}
			t.Logf("%s %-8s %4d rows: copies %6.1f ms, %s %8.1f ms", q.Name, m.name, len(want)-1, ms(copyTime), what, ms(d))
			if diff := firstDiff(got, want); diff != "" {
				t.Errorf("%s %s (%s) differs from the copies: %s", q.Name, what, m.name, diff)
			}
		}
	}
}

// TestTPCHStoredMasksMatchCopies is TestTPCHGovernedMatchesCopies with
// stored masks (docs/masks.md, "Stored masks"): the columns `pgranger masks
// --stored-ddl` prints for the TPC-H policies are added to the source
// tables (the copies stay as they are), pgranger reads them (its check
// shows the stored column in the rewrite of Q13's predicate), and every
// query still returns exactly what it returns on the copies. The columns
// are dropped when the test ends.
func TestTPCHStoredMasksMatchCopies(t *testing.T) {
	tpchData(t)
	p := startTPCHProxy(t)
	tpchCopies(t, p, tpchConn(t, p, tpch.Schema), tpchConn(t, nil, tpch.CopySchema))
	env := append(os.Environ(), "PGRANGER_BACKEND__DSN="+cluster.DSN(tpchRole, tpchRole, tpchDB),
		"PGRANGER_POLICY__SERVICE_NAME="+tpch.ServiceName)
	cfg := filepath.Join(p.dir, "pgranger.toml")
	cli := exec.Command(binary, "masks", "--stored-ddl", "--config", cfg, "--database", tpchDB)
	cli.Env = env
	out, err := cli.Output()
	if err != nil {
		t.Fatalf("pgranger masks --stored-ddl: %v", err)
	}
	var ddl []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "ALTER TABLE ") {
			ddl = append(ddl, line)
		}
	}
	if len(ddl) != 6 || strings.Contains(string(out), "exists but") {
		t.Fatalf("stored-mask DDL for the TPC-H policies: %d statements (want 6: MASK_HASH cannot be stored):\n%s", len(ddl), out)
	}
	super := tpchConn(t, nil, tpch.Schema)
	var drops []string
	for _, stmt := range ddl {
		if _, err := super.Exec(ctx(t), stmt); err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(stmt) // ALTER TABLE t ADD COLUMN IF NOT EXISTS name …
		drops = append(drops, "ALTER TABLE "+f[2]+" DROP COLUMN "+f[8])
	}
	// Other tests read tpch with a service role whose DDL is logged: leave
	// no stored-mask column for its catalog to check.
	t.Cleanup(func() {
		for _, d := range drops {
			super.Exec(context.Background(), d)
		}
	})
	if _, err := super.Exec(ctx(t), "VACUUM ANALYZE tpch.orders, tpch.customer, tpch.supplier"); err != nil {
		t.Fatal(err)
	}
	check := exec.Command(binary, "check", "--config", cfg, "--user", tpchUser, "--database", tpchDB,
		"SELECT count(*) FROM tpch.orders WHERE o_comment NOT LIKE '%special%requests%'")
	check.Env = env
	out, err = check.CombinedOutput()
	if !strings.Contains(string(out), "o_comment__pgranger_mask_show_first_4") {
		t.Errorf("pgranger check does not read the stored column (%v):\n%s", err, out)
	}
	// A new proxy: its catalog is loaded with the stored columns.
	stored := startTPCHProxy(t)
	compareTPCH(t, "through pgranger", tpchConn(t, stored, tpch.Schema), tpchConn(t, nil, tpch.CopySchema))

	// The floor `bench -tpch-floor` measures pgranger against: plain views
	// of what pgranger sends for `SELECT * FROM tpch.<table>` (row filter,
	// stored masks, c_name's MASK_HASH computed) return exactly what the
	// copies hold.
	err = tpch.BuildFloor(ctx(t), super, func(table string) (string, error) {
		cmd := exec.Command(binary, "check", "--config", cfg, "--user", tpchUser, "--database", tpchDB, tpch.FloorQuery(table))
		cmd.Env = env
		return tpch.RewrittenSQL(cmd)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { super.Exec(context.Background(), "DROP SCHEMA "+tpch.FloorSchema+" CASCADE") }) // before the columns it reads
	compareTPCH(t, "on the floor views", tpchConn(t, nil, tpch.FloorSchema), tpchConn(t, nil, tpch.CopySchema))
}

// checkCopies: the copies hold the filtered rows (customer, orders and
// supplier lose some, the other tables none) and the masked values,
// checked against Hive's own mask UDFs on one customer, supplier and order
// read raw from tpch.
func checkCopies(t *testing.T, direct *pgx.Conn) {
	t.Helper()
	c := ctx(t)
	raw, err := tpch.Counts(c, direct, tpch.Schema)
	if err != nil {
		t.Fatal(err)
	}
	copied, err := tpch.Counts(c, direct, tpch.CopySchema)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rows in tpch: %s; in tpch_copy: %s", strings.Join(raw, " "), strings.Join(copied, " "))
	for i, table := range tpch.Tables {
		var n, m int
		fmt.Sscanf(raw[i], table+"=%d", &n)
		fmt.Sscanf(copied[i], table+"=%d", &m)
		filtered := table == "customer" || table == "orders" || table == "supplier"
		if filtered && (m < n/3 || m > n*4/5) {
			t.Errorf("%s: the copy holds %d of %d rows, want a third to four fifths (row filter)", table, m, n)
		}
		if !filtered && m != n {
			t.Errorf("%s: the copy holds %d of %d rows, want all (no row filter)", table, m, n)
		}
	}
	// The copies' masked columns hold what Hive's own UDFs return, cast
	// back to the column type (MASK_HASH of a varchar(25) is cut to 25
	// digits, char(15) padded).
	hive := interop.HiveForTest(t)
	cases := []struct{ table, key, column, mask string }{
		{"customer", "c_custkey", "c_name", "MASK_HASH"},
		{"customer", "c_custkey", "c_phone", "MASK_SHOW_FIRST_4"},
		{"customer", "c_custkey", "c_address", "MASK"},
		{"supplier", "s_suppkey", "s_phone", "MASK_SHOW_LAST_4"},
		{"supplier", "s_suppkey", "s_address", "MASK"},
		{"orders", "o_orderkey", "o_clerk", "MASK"},
		{"orders", "o_orderkey", "o_comment", "MASK_SHOW_FIRST_4"},
	}
	for _, cs := range cases {
		// The first row the copy holds, read raw and copied.
		var in, got, pgType string
		err := direct.QueryRow(c, fmt.Sprintf(`SELECT t.%[3]s, cp.%[3]s, pg_catalog.format_type(a.atttypid, a.atttypmod)
			FROM tpch.%[1]s t JOIN tpch_copy.%[1]s cp USING (%[2]s)
			JOIN pg_catalog.pg_attribute a ON a.attrelid = 'tpch.%[1]s'::pg_catalog.regclass AND a.attname = '%[3]s'
			ORDER BY %[2]s LIMIT 1`, cs.table, cs.key, cs.column)).Scan(&in, &got, &pgType)
		if err != nil {
			t.Fatal(err)
		}
		want := hiveMask(t, hive, cs.mask, pgType, in)[0]
		if got != want {
			t.Errorf("%s.%s: the copy holds %q, want %q (masked from %q)", cs.table, cs.column, got, want, in)
		}
	}
}

// TestTPCHReadsRunNoDDL: the TPC-H queries through pgranger make the
// backend run no DDL. The service role's sessions log DDL statements
// (log_statement = 'ddl', tpchData), the log line prefix names the session
// user, and every line of the run logged for tpch_svc is a failure.
//
// Today this fails: pgranger reads a row-filtered table through a
// temporary view it creates on the backend session first
// (CREATE OR REPLACE VIEW pg_temp.pgranger_rf_…, pgwire/views.go).
func TestTPCHReadsRunNoDDL(t *testing.T) {
	tpchData(t)
	setLogLinePrefix(t, tpchLogPrefx)
	p := startTPCHProxy(t)
	logPath := filepath.Join(cluster.Dir, "log")
	offset := fileSize(t, logPath)
	governed := tpchConn(t, p, tpch.Schema)
	for _, q := range tpch.Queries() {
		for _, m := range tpchModes {
			if _, _, err := runTPCH(governed, q.SQL, m.mode); err != nil {
				t.Fatalf("%s through pgranger (%s): %v", q.Name, m.name, err)
			}
		}
	}
	// A statement the role's sessions certainly log, as the end marker: the
	// log holds every line of the run once it is there, and its presence
	// shows that DDL of tpch_svc is logged with the tag at all.
	marker := fmt.Sprintf("CREATE TEMP TABLE pgranger_tpch_end_%d (x int)", time.Now().UnixNano())
	end, err := pgx.Connect(ctx(t), cluster.DSN(tpchRole, tpchRole, tpchDB))
	if err != nil {
		t.Fatal(err)
	}
	defer end.Close(context.Background())
	if _, err := end.Exec(ctx(t), marker); err != nil {
		t.Fatal(err)
	}
	var ddl []string
	eventually(t, 5*time.Second, func() string {
		ddl = ddl[:0]
		b, _ := os.ReadFile(logPath)
		if int64(len(b)) < offset {
			return "the server log shrank"
		}
		seen := false
		for _, line := range strings.Split(string(b[offset:]), "\n") {
			if strings.Contains(line, marker) {
				seen = true
				break
			}
			if strings.Contains(line, tpchLogTag) && (strings.Contains(line, "LOG:  statement: ") || strings.Contains(line, "LOG:  execute ")) {
				if len(line) > 240 {
					line = line[:240] + " …"
				}
				ddl = append(ddl, line)
			}
		}
		if !seen {
			return "the end marker is not in the server log"
		}
		return ""
	})
	if len(ddl) > 0 {
		show := ddl
		if len(show) > 5 {
			show = show[:5]
		}
		t.Errorf("the backend ran %d DDL statements for %d TPC-H reads through pgranger; the first:\n  %s",
			len(ddl), 2*len(tpch.Queries()), strings.Join(show, "\n  "))
	}
}

// setLogLinePrefix sets the cluster's log_line_prefix for the test (ALTER
// SYSTEM and a reload) and waits until new sessions use it.
func setLogLinePrefix(t *testing.T, prefix string) {
	t.Helper()
	set := func(sql string, want string) {
		// Two statements: ALTER SYSTEM cannot run in the implicit
		// transaction of a multi-statement Query.
		for _, s := range []string{sql, "SELECT pg_reload_conf()"} {
			if err := cluster.Exec(ctx(t), "postgres", s); err != nil {
				t.Fatal(err)
			}
		}
		eventually(t, 10*time.Second, func() string {
			conn, err := pgx.Connect(ctx(t), cluster.SuperDSN("postgres"))
			if err != nil {
				return err.Error()
			}
			defer conn.Close(context.Background())
			var got string
			conn.QueryRow(ctx(t), "SHOW log_line_prefix").Scan(&got)
			if want != "" && got != want {
				return "log_line_prefix is still " + got
			}
			return ""
		})
	}
	set(fmt.Sprintf("ALTER SYSTEM SET log_line_prefix = '%s'", prefix), prefix)
	t.Cleanup(func() { set("ALTER SYSTEM RESET log_line_prefix", "%m [%p] ") })
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// firstDiff describes the first difference of two results, "" if none.
func firstDiff(got, want []string) string {
	for i := 0; i < len(got) && i < len(want); i++ {
		if got[i] != want[i] {
			return fmt.Sprintf("line %d (0 = column names):\n got  %s\n want %s", i, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d rows, want %d", len(got)-1, len(want)-1)
	}
	return ""
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
