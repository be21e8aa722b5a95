package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
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
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgranger/pgranger/internal/testpg"
	"github.com/pgranger/pgranger/internal/testrepo"
)

// The suite shares one throwaway PostgreSQL cluster (with the demo data),
// one built pgranger binary and one proxy started from the demo config.
// Tests that need other settings start their own proxy with startProxy.
var (
	cluster   *testpg.Cluster
	binary    string
	repoRoot  string
	demoProxy *proxy
	skipAll   string
)

func TestMain(m *testing.M) {
	code := func() int {
		root, err := testrepo.Dir()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		repoRoot = root
		if _, err := testpg.BinDir(); err != nil {
			skipAll = err.Error()
			return m.Run()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		tmp, err := os.MkdirTemp("", "pgranger-e2e-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(tmp)
		binary = filepath.Join(tmp, "pgranger")
		build := exec.CommandContext(ctx, "go", "build", "-o", binary, "./cmd/proxy")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building pgranger: %v\n%s", err, out)
			return 1
		}
		cluster, err = testpg.NewWith(ctx, testpg.Options{MaxConnections: testClusterConnections})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer cluster.Stop()
		defer stopKeycloak()
		if err := loadDemo(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "loading demo data: %v\n%s\n", err, cluster.Log())
			return 1
		}
		demoProxy, err = launchProxy(proxyOptions{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer demoProxy.stop()
		return m.Run()
	}()
	os.Exit(code)
}

func loadDemo(ctx context.Context) error {
	if err := cluster.CreateDatabase(ctx, "demo"); err != nil {
		return err
	}
	schema, err := os.ReadFile(filepath.Join(repoRoot, "examples/demo/schema.sql"))
	if err != nil {
		return err
	}
	if err := cluster.Exec(ctx, "demo", string(schema)); err != nil {
		return err
	}
	return cluster.Exec(ctx, "demo", extraFixtures)
}

// extraFixtures are tables the tests need beyond the demo data.
const extraFixtures = `
CREATE SCHEMA maskex;
GRANT USAGE ON SCHEMA maskex TO pgranger_svc;
ALTER DEFAULT PRIVILEGES IN SCHEMA maskex GRANT SELECT ON TABLES TO pgranger_svc;
CREATE TABLE sales.orders_plain (id int, note text);
INSERT INTO sales.orders_plain VALUES (1, 'plain');
GRANT SELECT ON sales.orders_plain TO pgranger_svc;
CREATE SCHEMA other;
CREATE TABLE other.ungoverned (id int);
GRANT USAGE ON SCHEMA other TO pgranger_svc;
GRANT SELECT ON other.ungoverned TO pgranger_svc;
CREATE VIEW sales.orders_view AS SELECT id, ssn FROM sales.orders;
GRANT SELECT ON sales.orders_view TO pgranger_svc;
CREATE VIEW hr.directory AS SELECT id, name, email, department FROM hr.employees;
GRANT SELECT ON hr.directory TO pgranger_svc;
-- attack_test.go: known secrets behind masks, a restricted column and a row
-- filter (region = 'US'); a schema the attacker owns in Ranger; the
-- service role may write both, so every refusal is pgranger's.
CREATE SCHEMA vault;
CREATE TABLE vault.accounts (id int PRIMARY KEY, owner text NOT NULL, region text NOT NULL,
    card text, pin text, note text, balance numeric(12,2));
INSERT INTO vault.accounts VALUES
    (1, 'Ann Visible',       'US',   '4111-1111-1111-1234', 'PIN-8642-A', 'NOTE-TOPSECRET-A', 100.00),
    (2, 'HIDDEN-OWNER-EU',   'EU',   '4000-1234-5678-9999', 'PIN-8642-B', 'NOTE-TOPSECRET-B', 31337.77),
    (3, 'Bo Visible',        'US',   '4222-2222-2222-5678', 'PIN-8642-C', 'NOTE-TOPSECRET-C', 250.50),
    (4, 'HIDDEN-OWNER-APAC', 'APAC', '4333-3333-3333-0000', 'PIN-8642-D', 'NOTE-TOPSECRET-D', 0.00);
CREATE VIEW vault.accounts_v AS SELECT id, owner, card FROM vault.accounts;
CREATE TABLE vault.ledger (id int, region text, memo text) PARTITION BY LIST (region);
CREATE TABLE vault.ledger_us PARTITION OF vault.ledger FOR VALUES IN ('US');
CREATE TABLE vault.ledger_eu PARTITION OF vault.ledger FOR VALUES IN ('EU');
INSERT INTO vault.ledger VALUES (10, 'US', 'LEDGERUS-RAW-1'), (11, 'EU', 'LEDGER-SECRET-EU');
GRANT USAGE ON SCHEMA vault TO pgranger_svc;
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA vault TO pgranger_svc;
CREATE SCHEMA mallory;
GRANT USAGE, CREATE ON SCHEMA mallory TO pgranger_svc;
CREATE TABLE mallory.loot (v text);
GRANT ALL ON mallory.loot TO pgranger_svc;
`

// testClusterConnections is the cluster's max_connections: room for
// TestBackpressureIdleSessions's sessions (idleSessions), each with its
// own backend connection, beside the demo proxy's pool and the parallel
// tests' proxies.
const testClusterConnections = 800

// proxy is a running pgranger process.
type proxy struct {
	addr    string
	admin   string // admin.addr (/metrics, /readyz, POST /refresh)
	dir     string // holds pgranger.toml and policies/
	cmd     *exec.Cmd
	mu      sync.Mutex
	logs    bytes.Buffer
	exited  chan struct{}
	exitErr error // how the process ended; set before exited is closed
}

type proxyOptions struct {
	policies []byte            // hive.json content; nil = the demo bundle
	tags     []byte            // ServiceTags JSON (policy.file.tags); nil = none
	env      map[string]string // extra PGRANGER_* overrides
	// extraConfig is TOML appended to the config file, for what the
	// environment cannot set (tables such as identity.jwt.attribute-claims).
	extraConfig string
}

func (o proxyOptions) policyDoc() ([]byte, error) {
	if o.policies != nil {
		return o.policies, nil
	}
	return os.ReadFile(filepath.Join(repoRoot, "examples/policies/hive.json"))
}

// startProxy starts a proxy for one test and stops it when the test ends.
func startProxy(t *testing.T, o proxyOptions) *proxy {
	t.Helper()
	requireCluster(t)
	p, err := launchProxy(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("pgranger log:\n%s", p.log())
		}
	})
	return p
}

func launchProxy(o proxyOptions) (*proxy, error) {
	dir, err := os.MkdirTemp("", "pgranger-proxy-")
	if err != nil {
		return nil, err
	}
	doc, err := o.policyDoc()
	if err != nil {
		return nil, err
	}
	os.MkdirAll(filepath.Join(dir, "policies"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "policies/hive.json"), doc, 0o644); err != nil {
		return nil, err
	}
	if o.tags != nil {
		if err := os.WriteFile(filepath.Join(dir, "policies/tags.json"), o.tags, 0o644); err != nil {
			return nil, err
		}
	}
	base, err := os.ReadFile(filepath.Join(repoRoot, "examples/pgranger.toml"))
	if err != nil {
		return nil, err
	}
	cfg := strings.Replace(string(base), "[policy.file]", "[policy.file]\npoll-interval-ms = 100", 1)
	if o.extraConfig != "" {
		cfg += "\n" + o.extraConfig + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "pgranger.toml"), []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	// Both listeners bind port 0: the kernel picks free ports, and the
	// addresses are read back from pgranger's start-up log events, so no
	// port found free can be taken by someone else before pgranger binds
	// it. Those events are at level info.
	if lv := strings.ToLower(o.env["PGRANGER_LOG__LEVEL"]); lv == "warn" || lv == "error" {
		return nil, fmt.Errorf("PGRANGER_LOG__LEVEL=%s: the harness reads pgranger's addresses from its info-level start-up log", lv)
	}
	p := &proxy{dir: dir, exited: make(chan struct{})}
	cmd := exec.Command(binary, "serve", "--config", filepath.Join(dir, "pgranger.toml"))
	cmd.Env = append(os.Environ(),
		"PGRANGER_LISTEN__ADDR=127.0.0.1:0",
		"PGRANGER_ADMIN__ADDR=127.0.0.1:0",
		"PGRANGER_BACKEND__DSN="+cluster.DSN("pgranger_svc", "pgranger_svc", "demo"),
		"PGRANGER_AUDIT__PATH="+filepath.Join(dir, "audit.jsonl"),
	)
	if o.tags != nil {
		cmd.Env = append(cmd.Env, "PGRANGER_POLICY__FILE__TAGS="+filepath.Join(dir, "policies/tags.json"))
	}
	for k, v := range o.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr, _ := cmd.StderrPipe()
	cmd.Stdout = nil
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p.cmd = cmd
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.logs.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
		}
		p.exitErr = cmd.Wait()
		close(p.exited)
	}()
	// "pgranger listening" comes once the socket is bound (connections
	// wait in its backlog until the server accepts them), after the admin
	// endpoint's "admin endpoint listening".
	listening, err := p.awaitEvent(20*time.Second, "pgranger listening")
	if err != nil {
		p.stop()
		return nil, err
	}
	p.addr = listening["addr"]
	for _, ev := range p.events() {
		if ev["msg"] == "admin endpoint listening" {
			p.admin = ev["addr"]
		}
	}
	if p.addr == "" || p.admin == "" {
		p.stop()
		return nil, fmt.Errorf("pgranger's start-up log names no listen or admin address:\n%s", p.log())
	}
	return p, nil
}

// logEvent is one line of pgranger's log as key → value: slog's text
// format (key=value, values with spaces or quotes written as Go strings)
// or, with log.format = "json", one JSON object.
type logEvent map[string]string

func parseLogLine(line string) logEvent {
	ev := logEvent{}
	if strings.HasPrefix(line, "{") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			for k, v := range m {
				ev[k] = fmt.Sprint(v)
			}
		}
		return ev
	}
	for rest := strings.TrimSpace(line); rest != ""; rest = strings.TrimLeft(rest, " ") {
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 {
			break
		}
		key, val := rest[:eq], rest[eq+1:]
		if strings.HasPrefix(val, `"`) {
			q, err := strconv.QuotedPrefix(val)
			if err != nil {
				break
			}
			ev[key], _ = strconv.Unquote(q)
			rest = val[len(q):]
			continue
		}
		end := strings.IndexByte(val, ' ')
		if end < 0 {
			end = len(val)
		}
		ev[key], rest = val[:end], val[end:]
	}
	return ev
}

// events parses the proxy's log so far.
func (p *proxy) events() []logEvent {
	var evs []logEvent
	for _, line := range strings.Split(p.log(), "\n") {
		if line != "" {
			evs = append(evs, parseLogLine(line))
		}
	}
	return evs
}

// countEvents counts the log events with message msg.
func (p *proxy) countEvents(msg string) int {
	n := 0
	for _, ev := range p.events() {
		if ev["msg"] == msg {
			n++
		}
	}
	return n
}

// awaitEvent waits until the log holds an event whose message starts
// with msg and returns the first; it fails when the process exits or
// within passes.
func (p *proxy) awaitEvent(within time.Duration, msg string) (logEvent, error) {
	deadline := time.Now().Add(within)
	for {
		for _, ev := range p.events() {
			if strings.HasPrefix(ev["msg"], msg) {
				return ev, nil
			}
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("pgranger exited before logging %q:\n%s", msg, p.log())
		default:
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("pgranger did not log %q within %s:\n%s", msg, within, p.log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitEvent is awaitEvent for a test: it fails the test on a timeout.
func (p *proxy) waitEvent(t *testing.T, within time.Duration, msg string) logEvent {
	t.Helper()
	ev, err := p.awaitEvent(within, msg)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// eventually retries f until it returns "" or the deadline passes.
func eventually(t *testing.T, within time.Duration, f func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		msg := f()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// reload sends SIGHUP and waits until pgranger logs one more successful
// reload than before.
func (p *proxy) reload(t *testing.T) {
	t.Helper()
	before := p.countEvents("configuration reloaded")
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() string {
		if p.countEvents("configuration reloaded") == before {
			return "no reload in the log:\n" + p.log()
		}
		return ""
	})
}

func (p *proxy) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.String()
}

func (p *proxy) stop() {
	if p.cmd != nil && p.cmd.Process != nil {
		p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-p.exited
		}
	}
	os.RemoveAll(p.dir)
}

// writePolicies replaces the proxy's policy file atomically.
func (p *proxy) writePolicies(t *testing.T, doc []byte) {
	t.Helper()
	tmp := filepath.Join(p.dir, "policies/.hive.json.tmp")
	if err := os.WriteFile(tmp, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(p.dir, "policies/hive.json")); err != nil {
		t.Fatal(err)
	}
}

func (p *proxy) dsn(user, password string) string {
	return fmt.Sprintf("postgres://%s:%s@%s/demo?sslmode=disable", user, password, p.addr)
}

func requireCluster(t testing.TB) {
	t.Helper()
	if skipAll != "" {
		t.Skipf("end-to-end tests need PostgreSQL: %s", skipAll)
	}
}

// hijacked logs in to dsn with pgconn and takes the connection over, for
// tests that speak the protocol message by message; the connection closes
// with the test, or when deadline has passed.
func hijacked(t *testing.T, dsn string, deadline time.Duration) *pgconn.HijackedConn {
	t.Helper()
	pc, err := pgconn.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	h, err := pc.Hijack()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Conn.Close() })
	h.Conn.SetDeadline(time.Now().Add(deadline))
	return h
}

// connect opens a pgx connection through p as user (password = user name).
func connect(t *testing.T, p *proxy, user string) *pgx.Conn {
	t.Helper()
	requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, p.dsn(user, user))
	if err != nil {
		t.Fatalf("connecting as %s: %v\n%s", user, err, p.log())
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// rows runs sql and renders every row as "v1|v2|…" with NULL as "NULL",
// the way a user reads them (text format through the simple protocol, or
// pgx's decoding through the extended protocol).
func rows(t *testing.T, conn *pgx.Conn, sql string, args ...any) []string {
	t.Helper()
	out, err := tryRows(conn, sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}

func tryRows(conn *pgx.Conn, sql string, args ...any) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Text results, so values read as a user would read them in psql.
	args = append([]any{pgx.QueryResultFormats{pgx.TextFormatCode}}, args...)
	rs, err := conn.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		vals := rs.RawValues()
		parts := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				parts[i] = "NULL"
				continue
			}
			parts[i] = string(v)
		}
		out = append(out, strings.Join(parts, "|"))
	}
	return out, rs.Err()
}

// sqlstate returns the SQLSTATE of err ("" when err is not a server error).
func sqlstate(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func equalLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func sha256hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// The harness's reading of slog's text and JSON lines.
func TestParseLogLine(t *testing.T) {
	for line, want := range map[string]logEvent{
		`time=2026-01-02T03:04:05.000Z level=INFO msg="pgranger listening" addr=127.0.0.1:40001 version=dev`: {
			"time": "2026-01-02T03:04:05.000Z", "level": "INFO", "msg": "pgranger listening", "addr": "127.0.0.1:40001", "version": "dev"},
		`level=WARN msg="a \"quoted\" word" err="x = y"`: {"level": "WARN", "msg": `a "quoted" word`, "err": "x = y"},
		`{"level":"INFO","msg":"admin endpoint listening","addr":"127.0.0.1:40002","remote":false}`: {
			"level": "INFO", "msg": "admin endpoint listening", "addr": "127.0.0.1:40002", "remote": "false"},
	} {
		got := parseLogLine(line)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n got %v\nwant %v", line, got, want)
		}
	}
}
