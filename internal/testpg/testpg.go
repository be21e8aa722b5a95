// Package testpg starts throwaway PostgreSQL clusters for tests and the demo.
//
// A cluster lives in a fresh temporary directory, listens on 127.0.0.1 on a
// free port, and is removed by Stop. initdb and pg_ctl refuse to run as root,
// so when the process is root they run through `runuser -u postgres`. Tests
// that need a cluster call Start, which skips the test with a clear message
// when the PostgreSQL server binaries cannot be found.
package testpg

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// SuperPassword is the password of the cluster's superuser "postgres".
const SuperPassword = "postgres"

// Cluster is one running throwaway PostgreSQL server.
type Cluster struct {
	Dir     string // temporary directory holding data/ and the socket
	Port    int
	BinDir  string
	runAs   string // OS user that owns the data directory, "" = current user
	maxConn int
	stopped sync.Once
}

// BinDir finds the PostgreSQL server binaries: $TESTPG_BINDIR, then the
// newest /usr/lib/postgresql/*/bin, then initdb on PATH.
func BinDir() (string, error) {
	if d := os.Getenv("TESTPG_BINDIR"); d != "" {
		return d, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	best, bestVer := "", -1
	for _, m := range matches {
		v, err := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(m))))
		if err == nil && v > bestVer {
			best, bestVer = filepath.Dir(m), v
		}
	}
	if best != "" {
		return best, nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("PostgreSQL server binaries not found (set TESTPG_BINDIR or install postgresql)")
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// clusterPort returns a port for a cluster: a free one below the kernel's
// ephemeral range (ip_local_port_range), where the kernel never hands out
// a port to a bind to port 0 — pgranger's own listeners in tests, free-port
// probes, outgoing connections — so between this probe and the server's
// bind only another cluster could take it (start then retries). With an
// ephemeral range that leaves no room below it, any free port.
func clusterPort() (int, error) {
	lo := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				lo = n
			}
		}
	}
	const floor = 10000
	if lo-floor < 1000 {
		return FreePort()
	}
	for i := 0; i < 50; i++ {
		port := floor + rand.IntN(lo-floor)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		l.Close()
		return port, nil
	}
	return FreePort()
}

// New initialises and starts a cluster.
func New(ctx context.Context) (*Cluster, error) {
	return NewWith(ctx, Options{})
}

// Options adjusts a cluster.
type Options struct {
	MaxConnections int // default 300
}

// NewWith initialises and starts a cluster with opts.
func NewWith(ctx context.Context, o Options) (*Cluster, error) {
	if o.MaxConnections <= 0 {
		o.MaxConnections = 300
	}
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgranger-pg-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, BinDir: bin, maxConn: o.MaxConnections}
	if err := c.own(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	pwfile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwfile, []byte(SuperPassword+"\n"), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if out, err := c.run(ctx, "initdb", "-D", data, "-U", "postgres", "--pwfile", pwfile,
		"-A", "scram-sha-256", "-E", "UTF8", "--locale", "C.UTF-8", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	if err := c.start(ctx, ""); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

// own makes the cluster's directory belong to the OS user that runs the
// server (postgres, when this process is root).
func (c *Cluster) own() error {
	if os.Geteuid() == 0 {
		c.runAs = "postgres"
		if _, err := user.Lookup(c.runAs); err != nil {
			return fmt.Errorf("running as root needs an OS user %q to own the cluster: %w", c.runAs, err)
		}
		if err := exec.Command("chown", c.runAs, c.Dir).Run(); err != nil {
			return fmt.Errorf("chown %s: %w", c.Dir, err)
		}
	}
	return nil
}

// start starts the server in c.Dir/data on a free port (a few tries, since
// a port found free may be taken before the server binds it).
func (c *Cluster) start(ctx context.Context, extra string) error {
	data := filepath.Join(c.Dir, "data")
	for attempt := 0; ; attempt++ {
		port, err := clusterPort()
		if err != nil {
			return err
		}
		c.Port = port
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c synchronous_commit=off -c max_connections=%d %s", port, c.Dir, c.maxConn, extra)
		out, err := c.run(ctx, "pg_ctl", "-D", data, "-o", opts, "-l", filepath.Join(c.Dir, "log"), "-w", "-t", "60", "start")
		if err == nil {
			return nil
		}
		if attempt >= 2 {
			logTail, _ := os.ReadFile(filepath.Join(c.Dir, "log"))
			return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, logTail)
		}
	}
}

// Standby starts a hot standby of c: a base backup streamed from c with
// pg_basebackup -R (which writes the primary_conninfo and standby.signal
// that make it follow c), started with hot_standby = on and c's
// max_connections (a standby refuses to start with fewer).
func (c *Cluster) Standby(ctx context.Context) (*Cluster, error) {
	dir, err := os.MkdirTemp("", "pgranger-standby-")
	if err != nil {
		return nil, err
	}
	s := &Cluster{Dir: dir, BinDir: c.BinDir, maxConn: c.maxConn}
	if err := s.own(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	conninfo := fmt.Sprintf("host=127.0.0.1 port=%d user=postgres password=%s", c.Port, SuperPassword)
	if out, err := s.run(ctx, "pg_basebackup", "-d", conninfo, "-D", filepath.Join(dir, "data"), "-R", "-X", "stream", "-c", "fast", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pg_basebackup: %v\n%s", err, out)
	}
	if err := s.start(ctx, "-c hot_standby=on"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func (c *Cluster) run(ctx context.Context, prog string, args ...string) ([]byte, error) {
	path := filepath.Join(c.BinDir, prog)
	var cmd *exec.Cmd
	if c.runAs != "" {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", c.runAs, "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	cmd.Dir = c.Dir
	// A process group of its own: Ctrl-C in a terminal goes to the whole
	// foreground group, and must not kill pg_ctl half-way (a postmaster
	// started but not waited for) — the caller decides when to stop.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd.CombinedOutput()
}

// Start is New for tests: it skips the test when no server binaries exist,
// fails it on any other error, and stops the cluster when the test ends.
func Start(t testing.TB) *Cluster {
	t.Helper()
	if _, err := BinDir(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := New(ctx)
	if err != nil {
		t.Fatalf("starting PostgreSQL: %v", err)
	}
	t.Cleanup(c.Stop)
	return c
}

// A test package whose tests need PostgreSQL shares one cluster, started by
// the first test that asks (Shared) and stopped after the last (Main): one
// initdb per package instead of one per test. Each test works in a database
// of its own (Database) so they cannot see each other's objects.
var shared struct {
	once sync.Once
	c    *Cluster
	err  error
}

// Shared returns the package's shared cluster, starting it on first use.
// Like Start it skips the test when no server binaries exist. The package
// must stop it from TestMain: func TestMain(m *testing.M) { testpg.Main(m) }.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	if _, err := BinDir(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		shared.c, shared.err = New(ctx)
	})
	if shared.err != nil {
		t.Fatalf("starting PostgreSQL: %v", shared.err)
	}
	return shared.c
}

// Database creates database db on the package's shared cluster and
// returns the cluster; the database is dropped when the test ends.
func Database(t testing.TB, db string) *Cluster {
	t.Helper()
	c := Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.CreateDatabase(ctx, db); err != nil {
		t.Fatalf("creating database %s: %v", db, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c.Exec(ctx, "postgres", "DROP DATABASE IF EXISTS "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)")
	})
	return c
}

// StopShared stops the shared cluster if one was started.
func StopShared() {
	if shared.c != nil {
		shared.c.Stop()
	}
}

// Main runs a package's tests and then stops its shared cluster.
func Main(m *testing.M) {
	code := m.Run()
	StopShared()
	os.Exit(code)
}

// Stop shuts the server down and removes its directory. Safe to call twice.
// Should pg_ctl fail, the postmaster named in postmaster.pid is sent
// SIGQUIT (PostgreSQL's immediate shutdown) before the directory goes, so
// no server is left running on a removed directory.
func (c *Cluster) Stop() {
	c.stopped.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		data := filepath.Join(c.Dir, "data")
		pid := 0
		if b, err := os.ReadFile(filepath.Join(data, "postmaster.pid")); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
		}
		if _, err := c.run(ctx, "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"); err != nil && pid > 0 {
			if syscall.Kill(pid, syscall.SIGQUIT) == nil {
				for i := 0; i < 100 && syscall.Kill(pid, 0) == nil; i++ {
					time.Sleep(50 * time.Millisecond)
				}
			}
		}
		os.RemoveAll(c.Dir)
	})
}

// DSN is a URL for user on database db (password for "postgres" is SuperPassword).
func (c *Cluster) DSN(userName, password, db string) string {
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", userName, password, c.Port, db)
}

// SuperDSN connects as the superuser to db.
func (c *Cluster) SuperDSN(db string) string { return c.DSN("postgres", SuperPassword, db) }

// Exec runs SQL (possibly several statements) as the superuser on db.
func (c *Cluster) Exec(ctx context.Context, db, sql string) error {
	conn, err := pgx.Connect(ctx, c.SuperDSN(db))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	return err
}

// CreateDatabase creates db owned by the superuser.
func (c *Cluster) CreateDatabase(ctx context.Context, db string) error {
	return c.Exec(ctx, "postgres", "CREATE DATABASE "+pgx.Identifier{db}.Sanitize())
}

// Log returns the server log, for failing tests.
func (c *Cluster) Log() string {
	b, _ := os.ReadFile(filepath.Join(c.Dir, "log"))
	return strings.TrimSpace(string(b))
}
