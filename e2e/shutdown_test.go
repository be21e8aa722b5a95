package e2e

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// SIGTERM drains pgranger (docs/operations.md "Stopping"): it stops
// accepting at once; a running statement finishes and its results reach
// the client (psql and pgx); an idle session gets PostgreSQL's FATAL 57P01
// "terminating connection due to administrator command" at once, and a
// session inside a transaction block when its transaction ends (here a
// COMMIT that commits); a statement still running at
// listen.shutdown-timeout-secs is cancelled on the backend and its
// session ends with 57P01; /readyz answers 503 while it drains; the
// process exits 0.
func TestSIGTERMDrainsSessions(t *testing.T) {
	p := startProxy(t, proxyOptions{policies: attackPolicies(t).bytes(t), env: map[string]string{
		"PGRANGER_LISTEN__SHUTDOWN_TIMEOUT_SECS": "3",
	}})
	t.Cleanup(func() { deleteLoot(t, "drain ") })
	super := superConn(t)
	const adminMsg = "terminating connection due to administrator command"

	idle := connect(t, p, "bob")
	rows(t, idle, "SELECT 1")
	inTxn := connect(t, p, "bob")
	rows(t, inTxn, "BEGIN")
	rows(t, inTxn, "INSERT INTO mallory.loot VALUES ('drain committed')")
	long := connect(t, p, "bob")
	longPID := backendPID(t, long)

	// Statements that are running when the signal comes.
	type result struct {
		rows []string
		err  error
		at   time.Time
	}
	short, tooLong := make(chan result, 1), make(chan result, 1)
	busy := connect(t, p, "bob")
	go func() {
		got, err := tryRows(busy, "SELECT pg_sleep(1.5), 1")
		short <- result{got, err, time.Now()}
	}()
	go func() {
		got, err := tryRows(long, "SELECT pg_sleep(30)")
		tooLong <- result{got, err, time.Now()}
	}()
	psqlOut := make(chan clientRun, 1)
	go func() {
		path, err := exec.LookPath("psql")
		if err != nil {
			psqlOut <- clientRun{err: err}
			return
		}
		cmd := exec.Command(path, "-X", "-A", "-t", p.dsn("bob", "bob"), "-c", "SELECT pg_sleep(1.5), id, ssn FROM sales.orders WHERE id = 3")
		cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10", "LC_ALL=C", "PGAPPNAME=pgranger-e2e-drain")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err = cmd.Run()
		psqlOut <- clientRun{stdout: stdout.String(), stderr: stderr.String(), err: err}
	}()
	activePID(t, super, "pgranger-e2e-drain")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var n int
		super.QueryRow(ctx(t), "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%pg_sleep%' AND backend_type = 'client backend' AND pid <> pg_backend_pid()").Scan(&n)
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d statements run, want 3", n)
		}
	}

	sent := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}

	// New connections are refused as soon as the signal is handled (one
	// that races with the listener's closing may be reset instead); /readyz
	// says why.
	var refused error
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline) && !errors.Is(refused, syscall.ECONNREFUSED); time.Sleep(20 * time.Millisecond) {
		c, err := pgx.Connect(ctx(t), p.dsn("bob", "bob"))
		if err == nil {
			c.Close(context.Background())
		}
		refused = err
	}
	if !errors.Is(refused, syscall.ECONNREFUSED) || time.Since(sent) > time.Second {
		t.Errorf("a new connection after SIGTERM: %v after %v, want connection refused at once", refused, time.Since(sent))
	}
	if resp, err := http.Get("http://" + p.admin + "/readyz"); err != nil || resp.StatusCode != 503 {
		t.Errorf("/readyz while draining: %v %v, want 503", resp, err)
	} else {
		resp.Body.Close()
	}

	// The idle session was ended at once.
	_, err := tryRows(idle, "SELECT 1")
	wantFatal(t, "an idle session", err, "57P01", adminMsg)

	// The transaction block goes on until it ends; its COMMIT commits.
	equalLines(t, "in the transaction after SIGTERM", rows(t, inTxn, "SELECT v FROM mallory.loot WHERE v LIKE 'drain %'"), []string{"drain committed"})
	if _, err := inTxn.Exec(ctx(t), "COMMIT"); err != nil {
		t.Errorf("COMMIT while draining: %v", err)
	}
	_, err = tryRows(inTxn, "SELECT 1")
	wantFatal(t, "after its transaction", err, "57P01", adminMsg)
	equalLines(t, "committed", lootRows(t, "drain "), []string{"drain committed"})

	// Running statements finish with their results.
	r := <-short
	if r.err != nil || strings.Join(r.rows, ",") != "|1" {
		t.Errorf("pgx: a statement running at SIGTERM: %q %v, want its row", r.rows, r.err)
	}
	_, err = tryRows(busy, "SELECT 1")
	wantFatal(t, "pgx after its statement", err, "57P01", adminMsg)
	// psql prints the row and exits 0; libpq then reads the FATAL error
	// that followed the ReadyForQuery and reports it on stderr, as after
	// a pg_terminate_backend right after a statement (docs/clients.md).
	run := <-psqlOut
	if run.err != nil || run.stdout != "|3|xxx-xx-3333\n" || run.stderr != "FATAL:  "+adminMsg+"\n" {
		t.Errorf("psql: a statement running at SIGTERM: %v\nstdout %q\nstderr %q", run.err, run.stdout, run.stderr)
	}

	// The statement that outlives the deadline is cancelled on the
	// backend; its session ends with 57P01.
	r = <-tooLong
	wantFatal(t, "a statement running at the deadline", r.err, "57P01", adminMsg)
	if d := r.at.Sub(sent); d < 2900*time.Millisecond || d > 5*time.Second {
		t.Errorf("the long statement ended %v after SIGTERM, want at the 3 s deadline", d)
	}
	waitNotActive(t, super, longPID, 3*time.Second)

	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("pgranger still runs %v after SIGTERM", time.Since(sent))
	}
	if p.exitErr != nil {
		t.Errorf("pgranger exited with %v, want status 0", p.exitErr)
	}
	if d := time.Since(sent); d > 6*time.Second {
		t.Errorf("the drain took %v", d)
	}
	for _, want := range []string{"shutting down: no new connections", "shutdown deadline passed", "pgranger stopped: every session has ended"} {
		if !strings.Contains(p.log(), want) {
			t.Errorf("the log lacks %q", want)
		}
	}
}

// With nothing running, SIGTERM ends the idle sessions and exits at once;
// a second signal during a drain ends it without waiting for the
// deadline: the running statement and the open transaction block end with
// 57P01.
func TestSIGTERMWithIdleSessionsAndSecondSignal(t *testing.T) {
	p := startProxy(t, proxyOptions{})
	idle := connect(t, p, "carol")
	rows(t, idle, "SELECT 1")
	sent := time.Now()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		t.Fatal("pgranger did not exit after SIGTERM with only idle sessions")
	}
	if d := time.Since(sent); p.exitErr != nil || d > 2*time.Second {
		t.Errorf("exit %v after %v, want status 0 at once", p.exitErr, d)
	}
	_, err := tryRows(idle, "SELECT 1")
	wantFatal(t, "an idle session", err, "57P01", "terminating connection due to administrator command")

	p = startProxy(t, proxyOptions{}) // listen.shutdown-timeout-secs: the default 5 s
	inTxn := connect(t, p, "carol")
	rows(t, inTxn, "BEGIN")
	busy := connect(t, p, "carol")
	done := make(chan error, 1)
	go func() { _, err := tryRows(busy, "SELECT pg_sleep(30)"); done <- err }()
	super := superConn(t)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var n int
		super.QueryRow(ctx(t), "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()").Scan(&n)
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the statement does not run")
		}
	}
	sent = time.Now()
	p.cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(300 * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGTERM)
	wantFatal(t, "after the second signal", <-done, "57P01", "terminating connection due to administrator command")
	_, err = tryRows(inTxn, "SELECT 1")
	wantFatal(t, "idle in a transaction block at the second signal", err, "57P01", "terminating connection due to administrator command")
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		t.Fatal("pgranger did not exit after the second signal")
	}
	if d := time.Since(sent); p.exitErr != nil || d > 3*time.Second {
		t.Errorf("exit %v after %v, want status 0 well before the 5 s deadline", p.exitErr, d)
	}
	if !strings.Contains(p.log(), "second signal: ending the remaining sessions now") {
		t.Errorf("the log does not mention the second signal:\n%s", p.log())
	}
}
