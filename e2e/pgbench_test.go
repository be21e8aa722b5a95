package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgranger/pgranger/internal/testpg"
)

// pgbench through pgranger in each query mode, with a custom script that
// reads the governed sales.orders as bob and checks every value it gets
// (\gset, \if): a wrong mask, a missing row filter or a lost row makes the
// script run a failing statement, which aborts the client.

func pgbenchPath(t *testing.T) string {
	t.Helper()
	if dir, err := testpg.BinDir(); err == nil {
		if p := filepath.Join(dir, "pgbench"); fileExists(p) {
			return p
		}
	}
	p, err := exec.LookPath("pgbench")
	if err != nil {
		skipLoudly(t, "pgbench not found (it comes with Debian's postgresql package; make test installs it)")
	}
	return p
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// pgbenchScript checks bob's view of every stored order.
func pgbenchScript(stored []order) string {
	var b strings.Builder
	bob := bobsOrders(stored)
	fmt.Fprintf(&b, "SELECT count(*) AS n FROM sales.orders \\gset\n\\if :n != %d\nSELECT pgranger_check_failed_row_count;\n\\endif\n", len(bob))
	for _, o := range stored {
		fmt.Fprintf(&b, "\\set id %d\n", o.id)
		if o.region != "US" {
			b.WriteString("SELECT count(*) AS hidden FROM sales.orders WHERE id = :id \\gset\n\\if :hidden != 0\nSELECT pgranger_check_failed_filter;\n\\endif\n")
			continue
		}
		// The masked values are compared with the ones computed here,
		// as text, so that nothing but the proxy's rewrite decides.
		fmt.Fprintf(&b, "SELECT (ssn = '%s' AND email = '%s' AND amount::text = '%s' AND order_date::text = '%s')::int AS ok FROM sales.orders WHERE id = :id \\gset\n",
			maskShowLast4(o.ssn), maskHash(o.email), orNull(o.amount), maskDateShowYear(o.orderDate))
		fmt.Fprintf(&b, "\\if :ok != 1\nSELECT pgranger_check_failed_order_%d;\n\\endif\n", o.id)
	}
	return b.String()
}

func runPgbench(t *testing.T, pgbench, user, script string, args ...string) clientRun {
	t.Helper()
	return runPgbenchAt(t, demoProxy, pgbench, user, script, args...)
}

func runPgbenchAt(t *testing.T, p *proxy, pgbench, user, script string, args ...string) clientRun {
	t.Helper()
	file := filepath.Join(t.TempDir(), "script.sql")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(p.addr)
	argv := append([]string{"-n", "-h", host, "-p", port, "-U", user, "-f", file}, args...)
	argv = append(argv, "demo")
	return runClient(t, time.Minute, "", []string{"PGPASSWORD=" + user, "PGCONNECT_TIMEOUT=10"}, pgbench, argv...)
}

func TestPgbench(t *testing.T) {
	requireCluster(t)
	pgbench := pgbenchPath(t)
	script := pgbenchScript(storedOrders(t))
	for _, mode := range []string{"simple", "extended", "prepared"} {
		t.Run(mode, func(t *testing.T) {
			run := runPgbench(t, pgbench, "bob", script, "-M", mode, "-c", "4", "-j", "2", "-t", "100")
			out := run.stdout + run.stderr
			if run.err != nil {
				t.Fatalf("pgbench -M %s: %v\n%s\nscript:\n%s", mode, run.err, out, script)
			}
			for _, want := range []string{
				"query mode: " + mode,
				"number of transactions actually processed: 400/400",
				"number of failed transactions: 0 (0.000%)",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("pgbench -M %s output lacks %q:\n%s", mode, want, out)
				}
			}
			if strings.Contains(out, "aborted") || strings.Contains(out, "ERROR") {
				t.Errorf("pgbench -M %s reported errors:\n%s", mode, out)
			}
		})
	}
	// -C: a new connection per transaction, so each one gets a pooled
	// backend connection reset by the previous session (DISCARD ALL) and
	// creates its row-filter view again. (With 8 clients this once caught
	// a connection handed to the next session while the last one still
	// flushed its reset through it.)
	t.Run("prepared, connection per transaction", func(t *testing.T) {
		run := runPgbench(t, pgbench, "bob", script, "-M", "prepared", "-C", "-c", "8", "-j", "2", "-t", "50")
		out := run.stdout + run.stderr
		if run.err != nil || !strings.Contains(out, "number of transactions actually processed: 400/400") || !strings.Contains(out, "number of failed transactions: 0 (0.000%)") {
			t.Errorf("pgbench -C: %v\n%s", run.err, out)
		}
	})
	// A denied statement aborts the client with pgranger's error, in
	// the prepared mode at its Parse.
	run := runPgbench(t, pgbench, "bob", "SELECT salary FROM hr.employees WHERE id = 1;\n", "-M", "prepared", "-t", "1")
	if out := run.stdout + run.stderr; run.err == nil || !strings.Contains(out, `pgranger: permission denied: user "bob" has no select access to column hr.employees.salary`) {
		t.Errorf("pgbench with a denied statement: err = %v\n%s", run.err, out)
	}
}

// Writes in each query mode: every transaction inserts a row into a table
// bob may write and updates it; the rows are all there afterwards.
func TestPgbenchWrites(t *testing.T) {
	requireCluster(t)
	pgbench := pgbenchPath(t)
	p := writerProxy(t, "pgbench ")
	// (Variables outside the literals: pgbench turns each :name into $n
	// in the extended modes, also inside quotes.)
	script := "\\set n random(1, 1000000000)\n" +
		"INSERT INTO mallory.loot (v) VALUES ('pgbench ' || :client_id || ' ' || :n);\n" +
		"UPDATE mallory.loot SET v = v || ' updated' WHERE v = 'pgbench ' || :client_id || ' ' || :n;\n"
	for _, mode := range []string{"simple", "extended", "prepared"} {
		run := runPgbenchAt(t, p, pgbench, "bob", script, "-M", mode, "-c", "2", "-t", "25")
		out := run.stdout + run.stderr
		if run.err != nil || !strings.Contains(out, "number of transactions actually processed: 50/50") || !strings.Contains(out, "number of failed transactions: 0 (0.000%)") {
			t.Errorf("pgbench -M %s writing: %v\n%s", mode, run.err, out)
		}
	}
	got := lootRows(t, "pgbench ")
	updated := 0
	for _, v := range got {
		if strings.HasSuffix(v, " updated") {
			updated++
		}
	}
	if len(got) != 150 || updated != 150 {
		t.Errorf("mallory.loot: %d rows, %d updated, want 150 each", len(got), updated)
	}
}
