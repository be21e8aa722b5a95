package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"
)

// Helpers for the real-client matrix (jdbc_test.go, psycopg2_test.go,
// nodepg_test.go, pgbench_test.go; docs/clients.md). Each client runs as a
// subprocess against the built binary; missing Debian packages are
// installed with apt-get where the test can, and a test skips loudly only
// where an install is impossible.

// skipLoudly skips t with a message that also reaches stderr without -v:
// a client that is not checked must not go unnoticed.
func skipLoudly(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(os.Stderr, "\n*** %s SKIPPED: %s ***\n\n", t.Name(), msg)
	t.Skip("SKIPPED: " + msg)
}

// clientCacheDir holds what is worth keeping between runs (npm's pg,
// compiled Java): pgranger-e2e in the user's cache directory
// ($XDG_CACHE_HOME or ~/.cache). (Not a PGRANGER_* variable: the proxy
// the tests start reads those as configuration.)
func clientCacheDir(t *testing.T) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "pgranger-e2e")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

var (
	aptMu      sync.Mutex
	aptUpdated bool
	aptFailed  = map[string]string{}
)

// ensureDebianPackage makes present() true by installing pkg with apt-get
// when it is not (as root, or through sudo -n), and skips t loudly when
// that is impossible. scripts/ensure-deps.sh installs the same packages
// for `make test`; this covers a bare `go test ./e2e/`.
func ensureDebianPackage(t *testing.T, pkg string, present func() bool) {
	t.Helper()
	if present() {
		return
	}
	aptMu.Lock()
	defer aptMu.Unlock()
	if present() {
		return
	}
	if why, failed := aptFailed[pkg]; failed {
		skipLoudly(t, "%s", why)
	}
	why := installDebian(pkg)
	if why == "" && !present() {
		why = fmt.Sprintf("installed Debian package %s, but the client is still not usable", pkg)
	}
	if why != "" {
		aptFailed[pkg] = why
		skipLoudly(t, "%s", why)
	}
}

func installDebian(pkg string) string {
	aptGet, err := exec.LookPath("apt-get")
	if err != nil {
		return fmt.Sprintf("needs Debian package %s, and there is no apt-get to install it", pkg)
	}
	var prefix []string
	if os.Geteuid() != 0 {
		sudo, err := exec.LookPath("sudo")
		if err != nil || exec.Command(sudo, "-n", "true").Run() != nil {
			return fmt.Sprintf("needs Debian package %s; run scripts/ensure-deps.sh as root (the test is not root and has no password-less sudo)", pkg)
		}
		prefix = []string{sudo, "-n"}
	}
	run := func(args ...string) ([]byte, error) {
		argv := append(append(append([]string{}, prefix...), "env", "DEBIAN_FRONTEND=noninteractive", aptGet), args...)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		return exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	}
	install := func() ([]byte, error) {
		return run("install", "-y", "-qq", "-o", "Dpkg::Options::=--force-confold", pkg)
	}
	fmt.Fprintf(os.Stderr, "e2e: installing Debian package %s\n", pkg)
	out, err := install()
	if err != nil && !aptUpdated {
		aptUpdated = true
		if out, err := run("update", "-qq"); err != nil {
			return fmt.Sprintf("needs Debian package %s; apt-get update failed: %v\n%s", pkg, err, out)
		}
		out, err = install()
	}
	if err != nil {
		return fmt.Sprintf("needs Debian package %s; apt-get install failed: %v\n%s", pkg, err, out)
	}
	return ""
}

// clientRun is one client subprocess's outcome.
type clientRun struct {
	stdout, stderr string
	err            error
}

// runClient runs a client program with a deadline and returns its output.
func runClient(t *testing.T, timeout time.Duration, dir string, env []string, name string, args ...string) clientRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s did not finish within %v: %w", name, timeout, err)
	}
	return clientRun{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// outputLines splits a client's stdout into lines.
func outputLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// order is one row of sales.orders as stored, read directly as the
// superuser; the expected results of every client are computed from these
// with the demo policies' masks and filters (examples/policies/hive.json).
type order struct {
	id                            int
	customer, region              string
	ssn, email, amount, orderDate *string
}

func storedOrders(t *testing.T) []order {
	t.Helper()
	requireCluster(t)
	c := ctx(t)
	conn, err := pgx.Connect(c, cluster.SuperDSN("demo"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(c)
	rs, err := conn.Query(c, "SELECT id, customer, region, ssn, email, amount::text, order_date::text FROM sales.orders ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var out []order
	for rs.Next() {
		var o order
		if err := rs.Scan(&o.id, &o.customer, &o.region, &o.ssn, &o.email, &o.amount, &o.orderDate); err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) != 8 {
		t.Fatalf("the demo data has %d orders, want 8", len(out))
	}
	return out
}

// bobsOrders are the rows bob (analysts, region US) reads: the row filter
// region = 'US' applied to stored values.
func bobsOrders(all []order) []order {
	var out []order
	for _, o := range all {
		if o.region == "US" {
			out = append(out, o)
		}
	}
	return out
}

// maskShowLast4 is Hive's mask_show_last_n(v, 4, 'x', 'x', 'x', -1, '1'):
// letters and digits become x except the last four characters.
func maskShowLast4(v *string) string {
	if v == nil {
		return "NULL"
	}
	r := []rune(*v)
	for i := 0; i < len(r)-4; i++ {
		if unicode.IsLetter(r[i]) || unicode.IsDigit(r[i]) {
			r[i] = 'x'
		}
	}
	return string(r)
}

// maskHash is MASK_HASH: the hex SHA-256 of the value.
func maskHash(v *string) string {
	if v == nil {
		return "NULL"
	}
	return sha256hex(*v)
}

// maskDateShowYear is MASK_DATE_SHOW_YEAR: the year, January 1st.
func maskDateShowYear(v *string) string {
	if v == nil {
		return "NULL"
	}
	return (*v)[:4] + "-01-01"
}

func orNull(v *string) string {
	if v == nil {
		return "NULL"
	}
	return *v
}

// bobRow renders an order as bob sees "id, ssn, email, amount, order_date".
func bobRow(o order) string {
	return strings.Join([]string{fmt.Sprint(o.id), maskShowLast4(o.ssn), maskHash(o.email), orNull(o.amount), maskDateShowYear(o.orderDate)}, "|")
}

// expectLines compares a client's output with what the test expects and
// reports the client's stderr on a mismatch.
func expectLines(t *testing.T, client string, run clientRun, want []string) {
	t.Helper()
	got := outputLines(run.stdout)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s output:\n got:\n  %s\nwant:\n  %s\nstderr:\n%s", client, strings.Join(got, "\n  "), strings.Join(want, "\n  "), run.stderr)
	}
}
