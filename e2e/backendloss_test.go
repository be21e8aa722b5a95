package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// A backend connection that dies mid-session ends that client's session
// with a FATAL error it can read, as a direct connection would; the other
// sessions go on, and the dead connection is never handed out again
// (docs/decisions.md "Wire protocol").

// superConn is a direct superuser connection, for pg_stat_activity and
// pg_terminate_backend.
func superConn(t *testing.T) *pgx.Conn {
	t.Helper()
	requireCluster(t)
	c, err := pgx.Connect(context.Background(), cluster.SuperDSN("demo"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// terminate runs pg_terminate_backend on pid and waits (up to 5 s) until
// the backend is gone.
func terminate(t *testing.T, super *pgx.Conn, pid uint32) {
	t.Helper()
	var ok bool
	if err := super.QueryRow(ctx(t), "SELECT pg_terminate_backend($1, 5000)", int(pid)).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend(%d): %v %v", pid, ok, err)
	}
}

func backendPID(t *testing.T, conn *pgx.Conn) uint32 {
	t.Helper()
	var pid uint32
	if err := conn.QueryRow(ctx(t), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	return pid
}

// activePID waits until the backend whose application_name is app runs
// a statement, and returns its pid.
func activePID(t *testing.T, super *pgx.Conn, app string) uint32 {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var pid uint32
		err := super.QueryRow(ctx(t), "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'", app).Scan(&pid)
		if err == nil {
			return pid
		}
	}
	t.Fatalf("no active backend with application_name %q", app)
	return 0
}

// waitNotActive waits until pid runs nothing (gone, or idle): what a
// statement that was cancelled on the backend comes to.
func waitNotActive(t *testing.T, super *pgx.Conn, pid uint32, within time.Duration) {
	t.Helper()
	var state string
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		err := super.QueryRow(ctx(t), "SELECT coalesce(state, '') FROM pg_stat_activity WHERE pid = $1", int(pid)).Scan(&state)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && state != "active") {
			return
		}
	}
	t.Errorf("backend %d still runs its statement after %v (state %q): it was not cancelled", pid, within, state)
}

// rawSession is a connection whose startup pgconn did; afterwards the test
// reads the protocol messages itself, to see exactly what a client gets.
type rawSession struct {
	pid  uint32 // the backend's pid (through pgranger: its backend connection's)
	conn net.Conn
	fe   *pgproto3.Frontend
}

func openRaw(t *testing.T, dsn string) *rawSession {
	t.Helper()
	pc, err := pgconn.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	res, err := pc.Exec(context.Background(), "SELECT pg_backend_pid()").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var pid uint32
	fmt.Sscan(string(res[0].Rows[0][0]), &pid)
	h, err := pc.Hijack()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Conn.Close() })
	return &rawSession{pid: pid, conn: h.Conn, fe: h.Frontend}
}

// untilClosed renders every message that arrives, one a line, until the
// connection closes (or 10 s pass).
func (r *rawSession) untilClosed() []string {
	r.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var got []string
	for {
		m, err := r.fe.Receive()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return append(got, "(still open after 10 s)")
			}
			return append(got, "(connection closed)")
		}
		switch m := m.(type) {
		case *pgproto3.ErrorResponse:
			got = append(got, fmt.Sprintf("ErrorResponse %s %s %s", m.SeverityUnlocalized, m.Code, m.Message))
		case *pgproto3.ReadyForQuery:
			got = append(got, "ReadyForQuery "+string(m.TxStatus))
		default:
			got = append(got, strings.TrimPrefix(fmt.Sprintf("%T", m), "*pgproto3."))
		}
	}
}

// wantFatal checks that err is the FATAL error a server sent.
func wantFatal(t *testing.T, what string, err error, code, msg string) {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Severity != "FATAL" || pe.Code != code || pe.Message != msg {
		t.Errorf("%s: err = %v, want FATAL %s %q", what, err, code, msg)
	}
}

// psqlVictim runs psql -c sql against dsn as application_name app and
// returns its stderr and exit status once it ends (after kill has ended
// its session).
func psqlVictim(t *testing.T, dsn, app, sql string, kill func()) (string, int) {
	t.Helper()
	path, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("skipping: psql not installed (make test installs postgresql-client)")
	}
	cmd := exec.Command(path, "-X", "-A", "-t", dsn, "-c", sql)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10", "LC_ALL=C", "PGAPPNAME="+app)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	kill()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("psql did not end after its session was ended; stdout %q stderr %q", stdout.String(), stderr.String())
	}
	if stdout.String() != "" {
		t.Errorf("psql printed %q", stdout.String())
	}
	return stderr.String(), cmd.ProcessState.ExitCode()
}

// bystander opens a second session through p and returns the check that
// it still reads bob's masked row, run once now.
func bystander(t *testing.T, p *proxy) func(when string) {
	t.Helper()
	other := connect(t, p, "bob")
	works := func(when string) {
		t.Helper()
		equalLines(t, "the other session "+when, rows(t, other, "SELECT ssn FROM sales.orders WHERE id = 1"), []string{"xxx-xx-1111"})
	}
	works("before")
	return works
}

// pg_terminate_backend of a session's backend: the client gets
// PostgreSQL's own FATAL 57P01, relayed, and then the connection closes —
// message for message as on a direct connection — idle, idle in a
// transaction block and during a statement (psql prints the same as
// directly); another session through pgranger keeps working and new
// connections work.
func TestBackendTerminatedByAdministrator(t *testing.T) {
	p := startProxy(t, proxyOptions{})
	super := superConn(t)
	otherWorks := bystander(t, p)
	const adminMsg = "terminating connection due to administrator command"

	// Idle: the FATAL error arrives unasked, then the connection closes.
	want := []string{"ErrorResponse FATAL 57P01 " + adminMsg, "(connection closed)"}
	for _, c := range []struct{ name, dsn string }{
		{"direct", cluster.DSN("pgranger_svc", "pgranger_svc", "demo")},
		{"through pgranger", p.dsn("bob", "bob")},
	} {
		r := openRaw(t, c.dsn)
		terminate(t, super, r.pid)
		equalLines(t, "idle, "+c.name, r.untilClosed(), want)
	}
	otherWorks("after an idle session's backend was terminated")

	// Idle in a transaction block (pgx): the next statement gets it.
	inTxn := connect(t, p, "bob")
	rows(t, inTxn, "BEGIN")
	equalLines(t, "in the transaction", rows(t, inTxn, "SELECT ssn FROM sales.orders WHERE id = 3"), []string{"xxx-xx-3333"})
	terminate(t, super, backendPID(t, inTxn))
	_, err := tryRows(inTxn, "SELECT 1")
	wantFatal(t, "idle in a transaction block", err, "57P01", adminMsg)
	if !inTxn.IsClosed() {
		t.Error("pgx keeps the connection open after FATAL")
	}

	// During a statement (psql): exactly what psql prints directly.
	var stderr [2]string
	var status [2]int
	for i, dsn := range []string{cluster.DSN("pgranger_svc", "pgranger_svc", "demo"), p.dsn("bob", "bob")} {
		app := fmt.Sprintf("pgranger-e2e-terminated-%d", i)
		stderr[i], status[i] = psqlVictim(t, dsn, app, "SELECT pg_sleep(30)", func() { terminate(t, super, activePID(t, super, app)) })
	}
	if !strings.HasPrefix(stderr[0], "FATAL:  "+adminMsg+"\n") || stderr[1] != stderr[0] || status[0] != 2 || status[1] != 2 {
		t.Errorf("psql during a statement:\ndirect (exit %d):\n%s\nthrough pgranger (exit %d):\n%s", status[0], stderr[0], status[1], stderr[1])
	}

	otherWorks("after the terminations")
	fresh := connect(t, p, "bob")
	equalLines(t, "a new session", rows(t, fresh, "SELECT id, ssn FROM sales.orders ORDER BY id"),
		[]string{"1|xxx-xx-1111", "3|xxx-xx-3333", "5|xxx-xx-5555"})
}

// A pooled connection whose backend is terminated while it waits in the
// pool is not handed to the next client (pgranger looks at it first): the
// next session gets a new backend connection and works.
func TestPooledConnectionTerminatedWhileIdle(t *testing.T) {
	p := startProxy(t, proxyOptions{env: map[string]string{"PGRANGER_BACKEND__POOL_SIZE": "1"}})
	super := superConn(t)
	first := connect(t, p, "bob")
	pid := backendPID(t, first)
	first.Close(context.Background())
	// Back in the pool once pgranger has reset it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var q string
		super.QueryRow(ctx(t), "SELECT query FROM pg_stat_activity WHERE pid = $1 AND state = 'idle'", int(pid)).Scan(&q)
		if q == "DISCARD ALL" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("backend %d was not reset and pooled", pid)
		}
	}
	terminate(t, super, pid)

	second := connect(t, p, "bob")
	equalLines(t, "the next session", rows(t, second, "SELECT ssn FROM sales.orders WHERE id = 1"), []string{"xxx-xx-1111"})
	if again := backendPID(t, second); again == pid {
		t.Errorf("the next session got the terminated backend %d", pid)
	}
}

// forwarder is a TCP relay between pgranger and PostgreSQL that the test
// can cut, connection by connection, like a network failure: no message,
// just a closed or reset stream. It learns each connection's backend pid
// from the BackendKeyData PostgreSQL sends at startup.
type forwarder struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	byPID  map[uint32]*relayed
}

type relayed struct {
	proxySide, pgSide net.Conn
	// partitioned: only pgranger's side was cut; PostgreSQL's stays open
	// and learns nothing until it writes.
	partitioned atomic.Bool
}

func startForwarder(t *testing.T, target string) *forwarder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &forwarder{ln: ln, target: target, byPID: map[uint32]*relayed{}}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go f.relay(c)
		}
	}()
	return f
}

func (f *forwarder) relay(c net.Conn) {
	s, err := net.Dial("tcp", f.target)
	if err != nil {
		c.Close()
		return
	}
	r := &relayed{proxySide: c, pgSide: s}
	go func() {
		io.Copy(s, c)
		if !r.partitioned.Load() {
			s.Close()
		}
	}()
	// PostgreSQL to pgranger: read message by message until the startup
	// is over, noting the pid, then copy.
	var hdr [5]byte
	for {
		if _, err := io.ReadFull(s, hdr[:]); err != nil {
			c.Close()
			return
		}
		body := make([]byte, be32(hdr[1:])-4)
		if _, err := io.ReadFull(s, body); err != nil {
			c.Close()
			return
		}
		if hdr[0] == 'K' && len(body) >= 4 {
			f.mu.Lock()
			f.byPID[be32(body)] = r
			f.mu.Unlock()
		}
		if _, err := c.Write(append(hdr[:], body...)); err != nil {
			s.Close()
			return
		}
		if hdr[0] == 'Z' {
			break
		}
	}
	io.Copy(c, s)
	c.Close()
}

// be32 reads a protocol integer ("binary" is the pgranger binary's path here).
func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// How cut ends a connection.
const (
	cutClose     = iota // both sides closed (FIN)
	cutReset            // pgranger's side reset (RST), PostgreSQL's closed
	cutPartition        // pgranger's side reset, PostgreSQL's left open: a network partition
)

// cut ends the connection of backend pid.
func (f *forwarder) cut(t *testing.T, pid uint32, how int) {
	t.Helper()
	f.mu.Lock()
	r, ok := f.byPID[pid]
	f.mu.Unlock()
	if !ok {
		t.Errorf("the forwarder carries no connection of backend %d", pid)
		return
	}
	if tc, ok := r.proxySide.(*net.TCPConn); ok && how != cutClose {
		tc.SetLinger(0)
	}
	r.partitioned.Store(how == cutPartition)
	r.proxySide.Close()
	if how != cutPartition {
		r.pgSide.Close()
	}
}

// The backend connection vanishes without a message (the network between
// pgranger and PostgreSQL fails): the client gets pgranger's FATAL 08006
// (docs/decisions.md) — idle (raw protocol: the error arrives unasked,
// then the connection closes), idle in a transaction block (pgx), during
// a statement cut off by a network partition (pgx; PostgreSQL does not
// notice, and pgranger cancels the statement still running there) and
// during a statement in psql. Other sessions are unaffected, and new ones
// work.
func TestBackendConnectionLost(t *testing.T) {
	requireCluster(t)
	fw := startForwarder(t, fmt.Sprintf("127.0.0.1:%d", cluster.Port))
	p := startProxy(t, proxyOptions{env: map[string]string{
		"PGRANGER_BACKEND__DSN": fmt.Sprintf("postgres://pgranger_svc:pgranger_svc@%s/demo?sslmode=disable", fw.ln.Addr()),
	}})
	super := superConn(t)
	otherWorks := bystander(t, p)
	const lostMsg = "pgranger: the backend server closed the connection unexpectedly; the session cannot continue"

	idle := openRaw(t, p.dsn("bob", "bob"))
	fw.cut(t, idle.pid, cutClose)
	equalLines(t, "idle", idle.untilClosed(), []string{"ErrorResponse FATAL 08006 " + lostMsg, "(connection closed)"})
	otherWorks("after an idle session lost its backend")

	inTxn := connect(t, p, "bob")
	rows(t, inTxn, "BEGIN")
	rows(t, inTxn, "SELECT 1")
	fw.cut(t, backendPID(t, inTxn), cutReset)
	_, err := tryRows(inTxn, "SELECT 1")
	wantFatal(t, "idle in a transaction block", err, "08006", lostMsg)

	busy := connect(t, p, "bob")
	pid := backendPID(t, busy)
	go func() {
		time.Sleep(300 * time.Millisecond)
		fw.cut(t, pid, cutPartition)
	}()
	start := time.Now()
	_, err = busy.Exec(ctx(t), "SELECT pg_sleep(30)")
	wantFatal(t, "during a statement", err, "08006", lostMsg)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the client learnt of the loss after %v", d)
	}
	waitNotActive(t, super, pid, 5*time.Second)

	app := "pgranger-e2e-lost"
	stderr, status := psqlVictim(t, p.dsn("bob", "bob"), app, "SELECT pg_sleep(30)", func() { fw.cut(t, activePID(t, super, app), cutReset) })
	if !strings.HasPrefix(stderr, "FATAL:  "+lostMsg+"\n") || status != 2 {
		t.Errorf("psql during a statement (exit %d):\n%s", status, stderr)
	}

	otherWorks("after the losses")
	fresh := connect(t, p, "carol")
	equalLines(t, "a new session", rows(t, fresh, "SELECT id, amount FROM sales.orders ORDER BY id"), []string{"2|NULL", "4|NULL", "7|NULL"})
}
