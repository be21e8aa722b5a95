package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgranger/pgranger/internal/testpg"
)

// The demo policies (examples/policies/hive.json): bob is a US analyst,
// carol EU support, alice compliance (exempt through MASK_NONE items).

func TestBobSeesMaskedUSRows(t *testing.T) {
	conn := connect(t, demoProxy, "bob")
	want := []string{
		"1|xxx-xx-1111|1200.50",
		"3|xxx-xx-3333|4410.25",
		"5|xxx-xx-5555|1780.00",
	}
	// Extended protocol (pgx's default) and the simple protocol agree.
	equalLines(t, "extended", rows(t, conn, "SELECT id, ssn, amount FROM sales.orders ORDER BY id"), want)
	equalLines(t, "simple", rows(t, conn, "SELECT id, ssn, amount FROM sales.orders ORDER BY id", pgx.QueryExecModeSimpleProtocol), want)
}

func TestMaskedValuesAreExact(t *testing.T) {
	conn := connect(t, demoProxy, "bob")
	got := rows(t, conn, "SELECT email, order_date FROM sales.orders WHERE id = 1")
	// sha256('ada@example.com') and MASK_DATE_SHOW_YEAR of 2024-01-15.
	equalLines(t, "bob email/date", got, []string{"b5fc85e55755f9e0d030a10ab4429b6b2944855f9a0d60077fe832becbc41d72|2024-01-01"})
}

func TestAliceIsExempt(t *testing.T) {
	conn := connect(t, demoProxy, "alice")
	got := rows(t, conn, "SELECT id, ssn, email, amount, region FROM sales.orders ORDER BY id")
	if len(got) != 8 {
		t.Fatalf("alice sees %d rows, want all 8: %v", len(got), got)
	}
	equalLines(t, "alice first rows", got[:2], []string{
		"1|111-11-1111|ada@example.com|1200.50|US",
		"2|222-22-2222|alan@example.com|830.00|EU",
	})
}

func TestCarolSeesEUWithoutAmounts(t *testing.T) {
	conn := connect(t, demoProxy, "carol")
	equalLines(t, "carol", rows(t, conn, "SELECT id, ssn, amount, region FROM sales.orders ORDER BY id"), []string{
		"2|xxx-xx-2222|NULL|EU",
		"4|xxx-xx-4444|NULL|EU",
		"7|xxx-xx-7777|NULL|EU",
	})
	// A masked column keeps its type: amount is still numeric.
	var typ string
	if err := conn.QueryRow(context.Background(), "SELECT pg_typeof(amount)::text FROM sales.orders LIMIT 1").Scan(&typ); err != nil {
		t.Fatal(err)
	}
	if typ != "numeric" {
		t.Errorf("pg_typeof(amount) = %q, want numeric", typ)
	}
}

func TestUserPredicatesSeeMaskedValues(t *testing.T) {
	conn := connect(t, demoProxy, "bob")
	// Probing the raw value finds nothing; the masked value matches.
	equalLines(t, "raw probe", rows(t, conn, "SELECT id FROM sales.orders WHERE ssn = '111-11-1111'"), nil)
	equalLines(t, "masked probe", rows(t, conn, "SELECT id FROM sales.orders WHERE ssn = 'xxx-xx-1111'"), []string{"1"})
}

func TestTableDeniedForCarol(t *testing.T) {
	conn := connect(t, demoProxy, "carol")
	_, err := tryRows(conn, "SELECT id FROM hr.employees")
	if sqlstate(err) != "42501" {
		t.Fatalf("carol reading hr.employees: err = %v, want SQLSTATE 42501", err)
	}
	if !strings.Contains(err.Error(), `user "carol"`) || !strings.Contains(err.Error(), "hr.employees") {
		t.Errorf("denial should name the user and the resource: %v", err)
	}
	// The session is still usable.
	equalLines(t, "after denial", rows(t, conn, "SELECT 1"), []string{"1"})
}

func TestColumnDeniedForBob(t *testing.T) {
	conn := connect(t, demoProxy, "bob")
	for _, sql := range []string{
		"SELECT salary FROM hr.employees",
		"SELECT * FROM hr.employees",
		"SELECT e FROM hr.employees e",
		"SELECT name FROM hr.employees WHERE salary > 100000",
	} {
		_, err := tryRows(conn, sql)
		if sqlstate(err) != "42501" || !strings.Contains(err.Error(), "hr.employees.salary") {
			t.Errorf("%s: err = %v, want 42501 naming hr.employees.salary", sql, err)
		}
	}
	equalLines(t, "allowed columns", rows(t, conn, "SELECT id, name, email FROM hr.employees ORDER BY id"), []string{
		"1|Margaret Hamilton|*****@example.com",
		"2|Katherine Johnson|*****@example.com",
		"3|Dennis Ritchie|*****@example.com",
	})
	equalLines(t, "count(*) is a table-level read", rows(t, conn, "SELECT count(*) FROM hr.employees"), []string{"3"})
}

func TestQueryShapes(t *testing.T) {
	conn := connect(t, demoProxy, "bob")
	cases := []struct {
		sql  string
		want []string
	}{
		{"SELECT o.id, o.ssn FROM sales.orders AS o WHERE o.id < 4 ORDER BY 1", []string{"1|xxx-xx-1111", "3|xxx-xx-3333"}},
		{"SELECT sales.orders.ssn FROM sales.orders WHERE id = 3", []string{"xxx-xx-3333"}},
		{"SELECT * FROM (SELECT ssn FROM sales.orders) s ORDER BY 1", []string{"xxx-xx-1111", "xxx-xx-3333", "xxx-xx-5555"}},
		{"WITH o AS (SELECT id, ssn FROM sales.orders) SELECT ssn FROM o WHERE id = 5", []string{"xxx-xx-5555"}},
		{"SELECT ssn FROM sales.orders WHERE id = 1 UNION ALL SELECT ssn FROM sales.orders WHERE id = 3", []string{"xxx-xx-1111", "xxx-xx-3333"}},
		{"SELECT (SELECT count(*) FROM sales.orders)", []string{"3"}},
		{"SELECT a.ssn FROM sales.orders a JOIN sales.orders b USING (id) WHERE b.id = 1", []string{"xxx-xx-1111"}},
		{"SELECT x.a, x.b FROM sales.orders AS x(a, b) WHERE x.a = 5", []string{"5|Barbara Liskov"}},
		{"SELECT row_to_json(o)->>'ssn' FROM sales.orders o WHERE id = 1", []string{"xxx-xx-1111"}},
		{"SELECT id FROM sales.orders WHERE EXISTS (SELECT 1 FROM sales.orders i WHERE i.id = 2)", nil},
		{"SET search_path = sales, public", nil},
		{"SELECT ssn FROM orders WHERE id = 1", []string{"xxx-xx-1111"}},
		{"SELECT current_user, session_user", []string{"bob|bob"}},
	}
	for _, c := range cases {
		got, err := tryRows(conn, c.sql, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		equalLines(t, c.sql, got, c.want)
	}
}

func TestDenialsBySQLSTATE(t *testing.T) {
	conn := connect(t, demoProxy, "bob")
	cases := []struct{ sql, code, contains string }{
		{"INSERT INTO sales.orders_plain VALUES (2, 'x')", "42501", "INSERT"},
		{"DELETE FROM sales.orders", "42501", "DELETE"},
		{"CREATE TABLE t (a int)", "42501", "CREATE TABLE"},
		{"DO $$ BEGIN END $$", "42501", "DO"},
		{"SET ROLE postgres", "42501", "role"},
		{"SET client_encoding = 'LATIN1'", "42501", "client_encoding"},
		{"SELECT query_to_xml('SELECT * FROM sales.orders', true, true, '')", "42501", "query_to_xml"},
		{"SELECT * FROM pg_stats", "42501", "pg_stats"},
		{"SELECT 1; SELECT salary FROM hr.employees", "42501", "salary"},
		{"SELEC 1", "42601", "syntax error"},
		{"SELECT * FROM no_such_table", "42P01", "no_such_table"},
		{"SELECT * FROM other.ungoverned", "42501", "other.ungoverned"},
	}
	for _, c := range cases {
		_, err := tryRows(conn, c.sql, pgx.QueryExecModeSimpleProtocol)
		if sqlstate(err) != c.code || !strings.Contains(err.Error(), c.contains) {
			t.Errorf("%s: err = %v, want SQLSTATE %s mentioning %q", c.sql, err, c.code, c.contains)
		}
	}
}

func TestDeniedStatementAbortsTransaction(t *testing.T) {
	conn := connect(t, demoProxy, "carol")
	ctx := context.Background()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tryRows(conn, "SELECT id FROM hr.employees"); sqlstate(err) != "42501" {
		t.Fatalf("want 42501, got %v", err)
	}
	// As after any error in PostgreSQL, the transaction is aborted.
	if _, err := tryRows(conn, "SELECT 1"); sqlstate(err) != "25P02" {
		t.Fatalf("after a denial inside a transaction: err = %v, want 25P02", err)
	}
	tx.Rollback(ctx)
	equalLines(t, "after rollback", rows(t, conn, "SELECT 1"), []string{"1"})
}

func TestWrongPassword(t *testing.T) {
	requireCluster(t)
	for _, dsn := range []string{demoProxy.dsn("bob", "nope"), demoProxy.dsn("mallory", "x")} {
		_, err := pgx.Connect(context.Background(), dsn)
		if sqlstate(err) != "28P01" {
			t.Errorf("connect %s: err = %v, want 28P01", dsn, err)
		}
	}
}

// ---- make demo (cmd/demo) ----

var demoBuild struct {
	once sync.Once
	path string
	err  error
}

// demoCommand builds cmd/demo beside the suite's pgranger binary.
func demoCommand(t *testing.T) string {
	t.Helper()
	requireCluster(t)
	demoBuild.once.Do(func() {
		demoBuild.path = filepath.Join(filepath.Dir(binary), "pgranger-demo")
		build := exec.Command("go", "build", "-o", demoBuild.path, "./cmd/demo")
		build.Dir = repoRoot
		if out, err := build.CombinedOutput(); err != nil {
			demoBuild.err = fmt.Errorf("building cmd/demo: %v\n%s", err, out)
		}
	})
	if demoBuild.err != nil {
		t.Fatal(demoBuild.err)
	}
	return demoBuild.path
}

// demoRun is one `make demo`: its own TMPDIR (where its cluster lives) and
// pgranger reached through a link in that directory, so any process or
// file the demo leaves behind is found by that path.
type demoRun struct {
	cmd         *exec.Cmd
	tmp         string
	addr, admin string
	stdout      *os.File // the read end of the demo's stdout
	stderr      *bytes.Buffer
	exited      chan error
}

func startDemo(t *testing.T, addr, admin string) *demoRun {
	t.Helper()
	tmp, err := os.MkdirTemp("", "pgranger-demo-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	os.Chmod(tmp, 0o755) // the cluster's owner (postgres, under root) must reach its directory
	if err := os.Symlink(binary, filepath.Join(tmp, "pgranger")); err != nil {
		t.Fatal(err)
	}
	d := &demoRun{tmp: tmp, addr: addr, admin: admin, stderr: &bytes.Buffer{}, exited: make(chan error, 1)}
	d.cmd = exec.Command(demoCommand(t), "-pgranger", filepath.Join(tmp, "pgranger"),
		"-config", filepath.Join(repoRoot, "examples/pgranger.toml"),
		"-schema", filepath.Join(repoRoot, "examples/demo/schema.sql"),
		"-listen", addr, "-admin", admin)
	d.cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	// A process group of its own, as a shell gives a foreground job, so
	// SIGINT can go to the whole group the way Ctrl-C does.
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	d.stdout = r
	d.cmd.Stdout, d.cmd.Stderr = w, d.stderr
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	go func() { d.exited <- d.cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-d.exited:
		default:
			syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		}
		// Whatever a failed run left (reported by the test) is stopped
		// here, so it does not outlive the suite: SIGQUIT is PostgreSQL's
		// immediate shutdown and ends a Go program.
		for pid := range d.processes() {
			syscall.Kill(pid, syscall.SIGQUIT)
		}
	})
	return d
}

// leftovers names what the demo left behind: processes whose command
// line mentions its directory (pgranger, the postmaster), and files in it
// other than the pgranger link.
func (d *demoRun) leftovers() []string {
	var left []string
	entries, _ := os.ReadDir(d.tmp)
	for _, e := range entries {
		if e.Name() != "pgranger" {
			left = append(left, "file "+filepath.Join(d.tmp, e.Name()))
		}
	}
	for pid, cmdline := range d.processes() {
		left = append(left, fmt.Sprintf("process %d: %s", pid, cmdline))
	}
	return left
}

// processes are the running processes whose command line names the
// demo's directory.
func (d *demoRun) processes() map[int]string {
	found := map[int]string{}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte(d.tmp)) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		found[pid] = strings.ReplaceAll(string(bytes.TrimRight(b, "\x00")), "\x00", " ")
	}
	return found
}

func freeAddr(t *testing.T) string {
	t.Helper()
	port, err := testpg.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// The demo stops pgranger and PostgreSQL and removes the cluster's
// directory on Ctrl-C (SIGINT to the process group), SIGTERM and SIGHUP,
// also when its stdout is a pipe whose reader has gone
// (`make demo | head -1`).
func TestDemoCleansUpOnSignals(t *testing.T) {
	t.Parallel() // its own clusters, ports and processes
	cases := []struct {
		name      string
		sig       syscall.Signal
		group     bool // to the process group, as the terminal sends Ctrl-C
		closePipe bool
	}{
		{"SIGINT", syscall.SIGINT, true, false},
		{"SIGTERM", syscall.SIGTERM, false, false},
		{"SIGHUP", syscall.SIGHUP, false, false},
		{"closed pipe", syscall.SIGINT, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := startDemo(t, freeAddr(t), freeAddr(t))
			lines := make(chan string, 100)
			go func() {
				sc := bufio.NewScanner(d.stdout)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			var banner []string
			timeout := time.After(2 * time.Minute)
		wait:
			for {
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatalf("the demo's output ended before it was ready:\n%s\n%s", strings.Join(banner, "\n"), d.stderr)
					}
					banner = append(banner, l)
					if strings.HasPrefix(l, "Press Ctrl-C") {
						break wait
					}
				case <-timeout:
					t.Fatalf("the demo was not ready within 2 minutes:\n%s\n%s", strings.Join(banner, "\n"), d.stderr)
				}
			}
			if banner[0] != "Starting a throwaway PostgreSQL cluster …" {
				t.Errorf("first line %q", banner[0])
			}
			text := strings.Join(banner, "\n")
			for _, want := range []string{"pgranger is running on " + d.addr, "http://" + d.admin + "/metrics", `psql "postgres://bob:bob@` + d.addr + `/demo"`} {
				if !strings.Contains(text, want) {
					t.Errorf("the banner lacks %q:\n%s", want, text)
				}
			}
			// It serves the demo.
			conn, err := pgx.Connect(context.Background(), fmt.Sprintf("postgres://bob:bob@%s/demo?sslmode=disable", d.addr))
			if err != nil {
				t.Fatalf("connecting to the demo: %v", err)
			}
			equalLines(t, "bob through the demo", rows(t, conn, "SELECT id, ssn FROM sales.orders ORDER BY id LIMIT 1"), []string{"1|xxx-xx-1111"})
			conn.Close(context.Background())

			if c.closePipe {
				d.stdout.Close() // the reader is gone: every later write fails
			}
			pid := d.cmd.Process.Pid
			if c.group {
				pid = -pid
			}
			if err := syscall.Kill(pid, c.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-d.exited:
				if err != nil {
					t.Errorf("the demo exited with %v after %s, want status 0\n%s", err, c.name, d.stderr)
				}
			case <-time.After(time.Minute):
				t.Fatalf("the demo did not stop within a minute of %s", c.name)
			}
			if !c.closePipe {
				var rest []string
				for l := range lines {
					rest = append(rest, l)
				}
				tail := strings.Join(rest, "\n")
				if !strings.Contains(tail, "Stopping PostgreSQL and removing") || !strings.Contains(tail, "pgranger stopped.") {
					t.Errorf("the demo did not say it stopped everything:\n%s", tail)
				}
			}
			if left := d.leftovers(); len(left) > 0 {
				t.Errorf("left behind after %s:\n%s", c.name, strings.Join(left, "\n"))
			}
			if c, err := net.DialTimeout("tcp", d.addr, time.Second); err == nil {
				c.Close()
				t.Errorf("%s still accepts connections", d.addr)
			}
		})
	}
}

// Busy ports are named, all of them, before anything starts.
func TestDemoNamesBusyPorts(t *testing.T) {
	requireCluster(t)
	l1, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l1.Close()
	l2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	d := startDemo(t, l1.Addr().String(), l2.Addr().String())
	select {
	case err := <-d.exited:
		if err == nil {
			t.Fatal("the demo started with its ports in use")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the demo did not refuse busy ports")
	}
	msg := d.stderr.String()
	for _, want := range []string{l1.Addr().String() + " (pgranger's PostgreSQL port) is in use", "make demo PORT=",
		l2.Addr().String() + " (pgranger's admin port) is in use", "make demo ADMIN_PORT="} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message lacks %q:\n%s", want, msg)
		}
	}
	if left := d.leftovers(); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}

	// ADMIN_PORT=0: a free admin port, named in the banner.
	d = startDemo(t, freeAddr(t), "127.0.0.1:0")
	sc := bufio.NewScanner(d.stdout)
	found := ""
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "Admin:") {
			found = sc.Text()
		}
		if strings.HasPrefix(sc.Text(), "Press Ctrl-C") {
			break
		}
	}
	if !strings.HasPrefix(found, "Admin:     http://127.0.0.1:") || strings.Contains(found, "127.0.0.1:0/") {
		t.Errorf("admin line %q, want a chosen port\n%s", found, d.stderr)
	}
	syscall.Kill(d.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(time.Minute):
		t.Fatal("the demo did not stop")
	}
	if left := d.leftovers(); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
