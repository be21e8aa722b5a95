package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The PostgreSQL JDBC driver (Debian libpostgresql-jdbc-java) with the
// machine's JDK: e2e/testdata/clients/ClientCheck.java is compiled once
// (cached by its content) and run against pgranger and, for
// DatabaseMetaData, against PostgreSQL directly.

const jdbcJar = "/usr/share/java/postgresql.jar"

var (
	jdbcOnce    sync.Once
	jdbcClasses string // directory with ClientCheck.class
	jdbcJava    string
	jdbcErr     error
)

func jdbcProgram(t *testing.T) (java, classpath string) {
	t.Helper()
	requireCluster(t)
	ensureDebianPackage(t, "libpostgresql-jdbc-java", func() bool { _, err := os.Stat(jdbcJar); return err == nil })
	ensureDebianPackage(t, "default-jdk-headless", func() bool { _, err := exec.LookPath("javac"); return err == nil })
	jdbcOnce.Do(func() { jdbcJava, jdbcClasses, jdbcErr = compileClientCheck(clientCacheDir(t)) })
	if jdbcErr != nil {
		t.Fatal(jdbcErr)
	}
	return jdbcJava, jdbcClasses + string(os.PathListSeparator) + jdbcJar
}

func compileClientCheck(cache string) (java, classes string, err error) {
	javac, err := exec.LookPath("javac")
	if err != nil {
		return "", "", err
	}
	// The java next to javac: one JDK compiles and runs.
	if real, err := filepath.EvalSymlinks(javac); err == nil {
		javac = real
	}
	java = filepath.Join(filepath.Dir(javac), "java")
	src, err := os.ReadFile(filepath.Join(repoRoot, "e2e/testdata/clients/ClientCheck.java"))
	if err != nil {
		return "", "", err
	}
	jar, err := os.Stat(jdbcJar)
	if err != nil {
		return "", "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%d\n", javac, jdbcJar, jar.ModTime().UnixNano())
	h.Write(src)
	classes = filepath.Join(cache, "jdbc-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(classes, "ClientCheck.class")); err == nil {
		return java, classes, nil
	}
	tmp, err := os.MkdirTemp(cache, "jdbc-build-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, javac, "-d", tmp, "-cp", jdbcJar,
		filepath.Join(repoRoot, "e2e/testdata/clients/ClientCheck.java")).CombinedOutput()
	if err != nil {
		return "", "", fmt.Errorf("javac ClientCheck.java: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, classes); err != nil {
		if _, statErr := os.Stat(filepath.Join(classes, "ClientCheck.class")); statErr != nil {
			return "", "", err
		}
	}
	// Builds of older sources are dropped after a day (a day, so that a
	// run of another checkout in progress keeps its classes).
	old, _ := filepath.Glob(filepath.Join(cache, "jdbc-*"))
	for _, dir := range old {
		if fi, err := os.Stat(dir); err == nil && dir != classes && time.Since(fi.ModTime()) > 24*time.Hour {
			os.RemoveAll(dir)
		}
	}
	return java, classes, nil
}

func jdbcURL(addr, user, password string) string {
	return fmt.Sprintf("jdbc:postgresql://%s/demo?user=%s&password=%s&ApplicationName=pgranger-e2e", addr, user, password)
}

// DatabaseMetaData through pgranger answers what a direct connection
// answers: these are pg_catalog queries, which are not governed.
func TestJDBCMetadata(t *testing.T) {
	java, cp := jdbcProgram(t)
	via := runClient(t, time.Minute, "", nil, java, "-cp", cp, "ClientCheck", "meta", jdbcURL(demoProxy.addr, "bob", "bob"))
	direct := runClient(t, time.Minute, "", nil, java, "-cp", cp, "ClientCheck", "meta",
		jdbcURL(fmt.Sprintf("127.0.0.1:%d", cluster.Port), "pgranger_svc", "pgranger_svc"))
	for _, r := range []clientRun{via, direct} {
		if r.err != nil {
			t.Fatalf("ClientCheck meta: %v\n%s%s", r.err, r.stdout, r.stderr)
		}
	}
	section := func(out, name string) []string {
		var lines []string
		for _, l := range outputLines(out) {
			if strings.HasPrefix(l, name+": ") {
				lines = append(lines, l)
			}
		}
		return lines
	}
	must := map[string][]string{
		"tables": {"tables: sales|orders|TABLE", "tables: sales|orders_plain|TABLE", "tables: sales|orders_view|VIEW"},
		"columns": {
			"columns: id|int4|4|10|0|0|1|NO|NO",
			"columns: customer|text|12|2147483647|0|0|2|NO|NO",
			"columns: ssn|text|12|2147483647|0|1|3|YES|NO",
			"columns: email|text|12|2147483647|0|1|4|YES|NO",
			"columns: amount|numeric|2|12|2|1|5|YES|NO",
			"columns: region|text|12|2147483647|0|0|6|NO|NO",
			"columns: order_date|date|91|13|0|1|7|YES|NO",
		},
		"schemas":     {"schemas: sales"},
		"primarykeys": {"primarykeys: sales|orders|id|1|orders_pkey"},
	}
	for _, name := range []string{"tables", "columns", "schemas", "primarykeys"} {
		t.Run(name, func(t *testing.T) {
			got, want := section(via.stdout, name), section(direct.stdout, name)
			equalLines(t, "direct connection "+name, want, must[name])
			equalLines(t, "through pgranger "+name, got, want)
		})
	}
}

// JDBC's setReadOnly(true) with auto-commit off opens each transaction
// READ ONLY: row-filtered reads need nothing written on the backend, so
// they return bob's masked rows (the oracle on the hidden amount 830 of
// order 2 included) in a transaction that is read-only.
func TestJDBCReadOnly(t *testing.T) {
	java, cp := jdbcProgram(t)
	bob := bobsOrders(storedOrders(t))
	run := runClient(t, time.Minute, "", nil, java, "-cp", cp, "ClientCheck", "readonly", jdbcURL(demoProxy.addr, "bob", "bob"),
		"SELECT id, ssn, email, amount, order_date FROM sales.orders ORDER BY id",
		"SELECT id FROM sales.orders WHERE 1/(amount - 830) <> 0 ORDER BY id",
		"SHOW transaction_read_only")
	if run.err != nil {
		t.Fatalf("ClientCheck readonly: %v\n%s%s", run.err, run.stdout, run.stderr)
	}
	var want []string
	for _, o := range bob {
		want = append(want, "readonly 1: "+bobRow(o))
	}
	for _, o := range bob {
		want = append(want, fmt.Sprintf("readonly 2: %d", o.id))
	}
	want = append(want, "readonly 3: on")
	expectLines(t, "ClientCheck readonly", run, want)
}

// The rest of the JDBC matrix, as bob (and carol for a denial), against a
// proxy of its own whose policy file the test edits while a server-side
// prepared statement is open. bob may write mallory.loot (attackPolicies):
// batches and copyIn write rows there, which are read back.
func TestJDBC(t *testing.T) {
	java, cp := jdbcProgram(t)
	p := writerProxy(t, "jdbc ")
	stored := storedOrders(t)
	bob := bobsOrders(stored)

	cmd := exec.Command(java, "-cp", cp, "ClientCheck", "run", jdbcURL(p.addr, "bob", "bob"), jdbcURL(p.addr, "carol", "carol"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()

	// The policy edits, each waited for in the proxy's log before the
	// program goes on: ssn becomes MASK_NULL, then the demo mask again.
	changed := attackPolicies(t)
	items := changed.policy(t, 10)["dataMaskPolicyItems"].([]any)
	items[1].(map[string]any)["dataMaskInfo"] = map[string]any{"dataMaskType": "MASK_NULL"}
	changed.bump()
	restored := attackPolicies(t)
	restored.bump()
	restored.bump()
	edits := []struct {
		doc        policyDoc
		generation string
	}{{changed, "generation=2"}, {restored, "generation=3"}}

	var got []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "waiting for policy change") {
			got = append(got, line)
			continue
		}
		if len(edits) == 0 {
			t.Fatalf("unexpected %q", line)
		}
		e := edits[0]
		edits = edits[1:]
		p.writePolicies(t, e.doc.bytes(t))
		eventually(t, 10*time.Second, func() string {
			if strings.Contains(p.log(), e.generation) {
				return ""
			}
			return "the proxy did not load the edited policies (" + e.generation + ")"
		})
		io.WriteString(stdin, "go\n")
	}
	werr := cmd.Wait()
	run := clientRun{stdout: strings.Join(got, "\n"), stderr: stderr.String(), err: werr}
	if werr != nil {
		t.Fatalf("ClientCheck run: %v\n%s\n%s", werr, run.stdout, run.stderr)
	}

	var want []string
	for _, o := range bob {
		if o.id > 1 {
			want = append(want, "params: "+bobRow(o))
		}
	}
	// The origin of an unmasked column is the table (not pgranger's
	// row-filter view); a masked one is computed (no table, nullability
	// unknown), as in any wrapper.
	want = append(want,
		"rsmeta: id int4(10,0) table=orders nullable=0",
		"rsmeta: ssn text(2147483647,0) table= nullable=2",
		"rsmeta: amount numeric(12,2) table=orders nullable=1")
	byID := map[int]order{}
	for _, o := range stored {
		byID[o.id] = o
	}
	idSSN := func(id int) string { return fmt.Sprintf("%d|%s", id, maskShowLast4(byID[id].ssn)) }
	// Executions 1-4 use the unnamed statement; the fifth prepares S_1;
	// later ones only Bind it.
	for i, id := range []int{1, 3, 5, 1, 3, 5, 1} {
		msgs := "Parse(stmt=null Bind(stmt=null"
		switch {
		case i+1 == 5:
			msgs = "Parse(stmt=S_1 Bind(stmt=S_1"
		case i+1 > 5:
			msgs = "Bind(stmt=S_1"
		}
		want = append(want, fmt.Sprintf("exec %d: %s %s", i+1, idSSN(id), msgs))
	}
	// After each policy edit the driver only Binds S_1 again: pgranger
	// re-prepared it under the new policy.
	want = append(want,
		"after policy change: 3|NULL Bind(stmt=S_1",
		"after policy restore: "+idSSN(5)+" Bind(stmt=S_1",
		"batch: ERROR 42501 next 42501",
		"statement batch: ERROR 42501",
		fmt.Sprintf("after batch: %d", len(bob)),
		"batch write: 1,1,1,1,1,1",
		"batch masked: 1,0,1", // order 2 is EU: filtered out for bob
		"batch mixed: ERROR 42501",
		"batch rollback: 1,1",
	)
	for i := 0; i < 6; i++ {
		want = append(want, fmt.Sprintf("batch read: jdbc batch %d", i))
	}
	want = append(want,
		"batch read: jdbc ssn 1 "+maskShowLast4(byID[1].ssn),
		"batch read: jdbc ssn 3 "+maskShowLast4(byID[3].ssn),
		"txn first: "+maskShowLast4(byID[5].ssn),
		"txn denied: ERROR 42501",
		"txn aborted: ERROR 25P02",
	)
	for _, o := range bob {
		want = append(want, "fetchsize: "+idSSN(o.id))
	}
	want = append(want,
		"cancel: ERROR 57014",
		"after cancel: "+maskShowLast4(byID[3].ssn),
		fmt.Sprintf("copy csv: %d rows", len(bob)),
	)
	for _, o := range bob {
		want = append(want, fmt.Sprintf("copy csv: %d,%s,%s", o.id, maskShowLast4(o.ssn), orNull(o.amount)))
	}
	for _, o := range bob {
		want = append(want, fmt.Sprintf("copy table: %d|%s", o.id, maskHash(o.email)))
	}
	want = append(want,
		"copy in: ERROR 42501",
		"copy in write: 2 1",
		"copy in read: jdbc copy a",
		"copy in read: jdbc copy b",
		"copy in read: jdbc copy, csv",
		"setSchema sales: "+idSSN(1),
		// hr.employees email: CUSTOM mask regexp_replace(email, '^[^@]+', '*****').
		"currentSchema hr: 1|*****@example.com",
		"currentSchema orders: "+maskShowLast4(byID[1].ssn),
		"large object: ERROR 42501",
		"after large object: ERROR 25P02",
		"after rollback: "+maskShowLast4(byID[1].ssn),
		"autosave denied: ERROR 42501",
		"autosave next: "+maskShowLast4(byID[1].ssn),
	)
	want = append(want,
		// The driver folds batches in powers of two: a two-row INSERT
		// (Statement.SUCCESS_NO_INFO for each) and the last one alone.
		"rewritten batch: -2,-2,1",
		"rewritten batch: jdbc rewritten 0",
		"rewritten batch: jdbc rewritten 1",
		"rewritten batch: jdbc rewritten 2",
	)
	for _, mode := range []string{"simple", "extendedForPrepared", "extendedCacheEverything"} {
		for _, o := range bob {
			if o.id >= 3 {
				want = append(want, "mode "+mode+": "+idSSN(o.id))
			}
		}
	}
	want = append(want, "carol denied: ERROR 42501")
	for _, o := range stored {
		if o.region == "EU" {
			want = append(want, fmt.Sprintf("carol: %d|NULL", o.id)) // amount is MASK_NULL for support
		}
	}
	expectLines(t, "ClientCheck run", run, want)
	// What PostgreSQL stored: the written rows and nothing of the failed
	// or rolled-back batches.
	var stored2 []string
	for _, l := range want {
		for _, prefix := range []string{"batch read: ", "copy in read: ", "rewritten batch: jdbc"} {
			if strings.HasPrefix(l, prefix) {
				stored2 = append(stored2, strings.TrimPrefix(l, strings.TrimSuffix(prefix, "jdbc")))
			}
		}
	}
	sort.Strings(stored2)
	equalLines(t, "mallory.loot", lootRows(t, "jdbc "), stored2)
	if t.Failed() {
		t.Logf("pgranger log:\n%s", p.log())
	}
}
