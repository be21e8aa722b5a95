package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// auditLines reads the proxy's audit file, one map per record.
func auditLines(t *testing.T, p *proxy) []map[string]any {
	t.Helper()
	data, _ := os.ReadFile(filepath.Join(p.dir, "audit.jsonl"))
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// An allowed, a masked, a filtered and a denied statement, through both
// protocols: every field of every record, exactly.
func TestAuditRecordFields(t *testing.T) {
	p := startProxy(t, proxyOptions{})
	conn := connect(t, p, "bob")
	simple := pgx.QueryExecModeSimpleProtocol
	rows(t, conn, "SELECT id, note FROM sales.orders_plain", simple)                              // allowed, nothing applied
	rows(t, conn, "SELECT id, email FROM hr.employees WHERE id < $1", 10)                         // masked (extended protocol)
	rows(t, conn, "SELECT id, region FROM sales.orders WHERE customer <> 'Ada Lovelace'", simple) // filtered
	if _, err := tryRows(conn, "SELECT salary FROM hr.employees WHERE name = 'Dennis Ritchie'", simple); sqlstate(err) != "42501" {
		t.Fatalf("salary: want 42501, got %v", err)
	}

	var recs []map[string]any
	eventually(t, 5*time.Second, func() string {
		recs = auditLines(t, p)
		if len(recs) < 4 {
			return fmt.Sprintf("want 4 audit records, got %d", len(recs))
		}
		return ""
	})
	if len(recs) != 4 {
		t.Fatalf("want exactly 4 audit records, got %d: %v", len(recs), recs)
	}
	host, _ := os.Hostname()
	common := map[string]any{"reqUser": "bob", "repo": "demo_hive", "repoType": 3.0, "enforcer": "ranger-acl", "agent": "pgranger",
		"agentHost": host, "cliIP": "127.0.0.1", "cluster": "demo", "roles": []any{"analyst"}, "authMethod": "scram-sha-256",
		"policy_version": 1.0, "action": "SELECT", "access": "select", "resType": "@column"}
	want := []map[string]any{
		{"resource": "sales/orders_plain/id,note", "result": 1.0, "policy": 1.0, "rowsAffected": 1.0},
		{"resource": "hr/employees/id,email", "result": 1.0, "policy": 2.0, "maskPolicies": []any{14.0}, "rowsAffected": 3.0},
		// The wrapper masks every masked column of the table (ssn,
		// email, order_date for bob), read or not.
		{"resource": "sales/orders/id,customer,region", "result": 1.0, "policy": 1.0, "maskPolicies": []any{10.0, 11.0, 13.0},
			"rowFilterPolicies": []any{20.0}, "rowsAffected": 2.0},
		{"resource": "hr/employees/salary", "result": 0.0, "policy": 3.0,
			"reason": `pgranger: permission denied: user "bob" has no select access to column hr.employees.salary`},
	}
	var lastSeq float64
	for i, rec := range recs {
		exp := map[string]any{}
		for k, v := range common {
			exp[k] = v
		}
		for k, v := range want[i] {
			exp[k] = v
		}
		// Fields whose value is not fixed: checked for shape, then compared.
		if ts, _ := rec["evtTime"].(string); ts == "" {
			t.Errorf("record %d: no evtTime", i)
		} else if at, err := time.Parse(time.RFC3339Nano, ts); err != nil || time.Since(at) > time.Minute || time.Since(at) < 0 {
			t.Errorf("record %d: evtTime %q is not a recent RFC 3339 time", i, ts)
		}
		exp["evtTime"] = rec["evtTime"]
		if seq, _ := rec["seq_num"].(float64); seq <= lastSeq {
			t.Errorf("record %d: seq_num %v does not increase (previous %v)", i, rec["seq_num"], lastSeq)
		} else {
			lastSeq = seq
		}
		exp["seq_num"] = rec["seq_num"]
		if fp, _ := rec["fingerprint"].(string); len(fp) != 16 || strings.Trim(fp, "0123456789abcdef") != "" {
			t.Errorf("record %d: fingerprint %q is not pg_query's 16 hex digits", i, fp)
		}
		exp["fingerprint"] = rec["fingerprint"]
		if i < 3 {
			if d, ok := rec["durationMs"].(float64); !ok || d < 0 || d > 10000 {
				t.Errorf("record %d: durationMs %v", i, rec["durationMs"])
			}
			exp["durationMs"] = rec["durationMs"]
		}
		got, _ := json.Marshal(rec)
		wantJSON, _ := json.Marshal(exp)
		if string(got) != string(wantJSON) {
			t.Errorf("record %d:\n got %s\nwant %s", i, got, wantJSON)
		}
	}
	if fp1, fp2 := recs[2]["fingerprint"], recs[3]["fingerprint"]; fp1 == fp2 {
		t.Errorf("two different statements share the fingerprint %v", fp1)
	}
	data, _ := os.ReadFile(filepath.Join(p.dir, "audit.jsonl"))
	for _, lit := range []string{"Ada Lovelace", "Dennis Ritchie"} {
		if strings.Contains(string(data), lit) {
			t.Errorf("the audit log contains the literal %q", lit)
		}
		if strings.Contains(p.log(), lit) {
			t.Errorf("the process log contains the literal %q", lit)
		}
	}
}

// Ranger's auditMode "audit-none" in the bundle silences the audit but for
// what its audit filters record; a policy with isAuditEnabled false
// silences the accesses it decides.
func TestAuditHonoursBundleAuditSettings(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "examples/policies/hive.json"))
	if err != nil {
		t.Fatal(err)
	}
	var bundle map[string]any
	json.Unmarshal(doc, &bundle)
	for _, pol := range bundle["policies"].([]any) {
		if pm := pol.(map[string]any); pm["id"] == 1.0 {
			pm["isAuditEnabled"] = false // sales - all tables
		}
	}
	quiet, _ := json.Marshal(bundle)
	p := startProxy(t, proxyOptions{policies: quiet})
	conn := connect(t, p, "bob")
	simple := pgx.QueryExecModeSimpleProtocol
	rows(t, conn, "SELECT id FROM sales.orders_plain", simple) // decided by policy 1 only: not audited
	rows(t, conn, "SELECT id FROM sales.orders", simple)       // policy 1 and row filter 20: audited
	rows(t, conn, "SELECT 1", simple)                          // no policy involved: audited
	eventually(t, 5*time.Second, func() string {
		if n := len(auditLines(t, p)); n < 2 {
			return fmt.Sprintf("%d records", n)
		}
		return ""
	})
	time.Sleep(200 * time.Millisecond) // a third record would be written by now
	var got []string
	for _, r := range auditLines(t, p) {
		res, _ := r["resource"].(string)
		got = append(got, fmt.Sprint(r["action"], " ", res))
	}
	equalLines(t, "audited", got, []string{"SELECT sales/orders/id", "SELECT "})

	bundle["auditMode"] = "audit-none"
	none, _ := json.Marshal(bundle)
	p.writePolicies(t, none)
	eventually(t, 5*time.Second, func() string {
		if v := metric(t, p, "pgranger_policy_generation"); v != "2" {
			return "generation " + v
		}
		return ""
	})
	rows(t, conn, "SELECT id FROM sales.orders", simple)
	tryRows(conn, "SELECT salary FROM hr.employees", simple)
	time.Sleep(200 * time.Millisecond)
	// The bundle's audit filter [{accessResult: DENIED, isAudited: true}]
	// still records the denial, as in Ranger (filters apply after the
	// audit mode); the allowed read is not recorded.
	lines := auditLines(t, p)
	if n := len(lines); n != 3 {
		t.Fatalf("audit-none: %d records, want the 2 from before and the denial", n)
	}
	if last := lines[2]; last["resource"] != "hr/employees/salary" || last["result"] != 0.0 {
		t.Errorf("audit-none: the third record is %v, want the denial", last)
	}
}

// scrape parses /metrics.
func scrape(t *testing.T, p *proxy) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + p.admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// value is the value of name{labels} ("k=v" pairs), -1 when absent; for a
// histogram its sample count.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
	sort.Strings(labels)
outer:
	for _, m := range f.Metric {
		var have []string
		for _, l := range m.Label {
			have = append(have, l.GetName()+"="+l.GetValue())
		}
		sort.Strings(have)
		if strings.Join(have, ",") != strings.Join(labels, ",") {
			continue outer
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// The counters move by exactly what the statements and connections did.
func TestMetricsCountStatementsAndConnections(t *testing.T) {
	p := startProxy(t, proxyOptions{})
	// startProxy learns that pgranger listens from its log, without a
	// connection of its own: a fresh proxy has counted none.
	before := scrape(t, p)
	if value(before, "pgranger_connections_total") != 0 || value(before, "pgranger_connections_active") != 0 {
		t.Fatalf("a fresh proxy counted connections: total %v, active %v", value(before, "pgranger_connections_total"), value(before, "pgranger_connections_active"))
	}
	if v := value(before, "pgranger_statements_total", "kind=SELECT", "result=ok"); v != -1 {
		t.Fatalf("a fresh proxy already counted %v SELECTs", v)
	}

	conn := connect(t, p, "bob")
	simple := pgx.QueryExecModeSimpleProtocol
	const q = "SELECT id FROM sales.orders_plain WHERE id = 1"
	rows(t, conn, q, simple)
	rows(t, conn, q, simple) // the same text again: its template's rewrite, now stored by its text
	rows(t, conn, q, simple) // and a third time: a hit by its text
	if _, err := tryRows(conn, "SELECT salary FROM hr.employees", simple); sqlstate(err) != "42501" {
		t.Fatalf("want a denial, got %v", err)
	}
	if _, err := tryRows(conn, "SELECT 1/0", simple); sqlstate(err) != "22012" {
		t.Fatalf("want division by zero, got %v", err)
	}
	if _, err := tryRows(conn, "BEGIN; SELECT 1; COMMIT", simple); err != nil {
		t.Fatal(err)
	}
	if c, err := pgx.Connect(ctx(t), p.dsn("bob", "wrong")); err == nil {
		c.Close(context.Background())
		t.Fatal("a wrong password was accepted")
	}

	var after map[string]*dto.MetricFamily
	eventually(t, 5*time.Second, func() string {
		after = scrape(t, p)
		if v := value(after, "pgranger_connections_active"); v != 1 {
			return fmt.Sprintf("connections_active = %v, want 1 (bob's session)", v)
		}
		return ""
	})
	for _, name := range []string{"pgranger_connections_active", "pgranger_connections_total", "pgranger_connections_rejected_total",
		"pgranger_statements_total", "pgranger_rewrite_duration_seconds", "pgranger_rewrite_cache_hits_total",
		"pgranger_rewrite_cache_misses_total", "pgranger_pool_connections", "pgranger_pool_waiting", "pgranger_pool_wait_seconds",
		"pgranger_client_bytes_received_total", "pgranger_client_bytes_sent_total", "pgranger_audit_records_total",
		"pgranger_audit_dropped_total", "pgranger_policy_version", "pgranger_policy_age_seconds", "pgranger_config_reloads_total",
		"pgranger_backend_reachable", "pgranger_build_info"} {
		f := after[name]
		if f == nil {
			t.Errorf("metric %s missing", name)
			continue
		}
		if f.GetHelp() == "" {
			t.Errorf("metric %s has no help text", name)
		}
	}
	delta := func(name string, labels ...string) float64 {
		b := value(before, name, labels...)
		if b < 0 {
			b = 0
		}
		return value(after, name, labels...) - b
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"pgranger_statements_total", []string{"kind=SELECT", "result=ok"}, 4}, // q three times, SELECT 1
		{"pgranger_statements_total", []string{"kind=SELECT", "result=denied"}, 1},
		{"pgranger_statements_total", []string{"kind=SELECT", "result=error"}, 1},
		{"pgranger_statements_total", []string{"kind=BEGIN", "result=ok"}, 1},
		{"pgranger_statements_total", []string{"kind=COMMIT", "result=ok"}, 1},
		{"pgranger_connections_total", nil, 2},
		{"pgranger_connections_rejected_total", []string{"reason=auth"}, 1},
		{"pgranger_connections_rejected_total", []string{"reason=max_clients"}, 0},
		{"pgranger_rewrite_duration_seconds", nil, 6}, // one rewrite per simple Query
		{"pgranger_rewrite_cache_hits_total", []string{"cache=statement"}, 1},
		{"pgranger_rewrite_cache_misses_total", []string{"cache=statement"}, 5},
		{"pgranger_rewrite_cache_hits_total", []string{"cache=template"}, 1}, // q's second time
		{"pgranger_pool_connections", []string{"database=demo", "state=in_use"}, 1},
		{"pgranger_pool_wait_seconds", nil, 1},   // bob's session took a backend connection
		{"pgranger_audit_records_total", nil, 8}, // q three times, the denial, 1/0, BEGIN, SELECT 1, COMMIT
	} {
		if got := delta(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v moved by %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if v := value(after, "pgranger_pool_connections", "database=demo", "state=idle"); v != 0 {
		t.Errorf("idle backend connections = %v, want 0", v)
	}
	if d := delta("pgranger_client_bytes_received_total"); d < float64(2*len(q)) {
		t.Errorf("bytes received moved by %v, less than the two queries' text", d)
	}
	if d := delta("pgranger_client_bytes_sent_total"); d <= 0 {
		t.Errorf("bytes sent moved by %v", d)
	}
	if v := value(after, "pgranger_backend_reachable"); v != 1 {
		t.Errorf("backend_reachable = %v", v)
	}
	if v := value(after, "pgranger_policy_version"); v != 1 {
		t.Errorf("policy_version = %v", v)
	}
}

// /readyz is 503 while the policies are stale and 200 again once they
// load; 503 too when the backend does not accept connections.
func TestReadyzFollowsPolicyFreshnessAndBackend(t *testing.T) {
	p := startProxy(t, proxyOptions{env: map[string]string{"PGRANGER_POLICY__CACHE_TTL_SECS": "1"}})
	ready := func() (int, string) { return adminGet(t, p, "GET", "/readyz") }
	if code, body := ready(); code != 200 || !strings.HasPrefix(body, "ready: policyVersion 1 from file") {
		t.Fatalf("readyz at start: %d %q", code, body)
	}
	good, _ := os.ReadFile(filepath.Join(p.dir, "policies/hive.json"))
	p.writePolicies(t, []byte(`{"serviceName": "demo_hive", "policies": [`)) // truncated: fails to parse
	eventually(t, 5*time.Second, func() string {
		if code, body := ready(); code != 503 || !strings.HasPrefix(body, "not ready: policies are unavailable (the last successful policy load was") {
			return fmt.Sprintf("%d %q", code, body)
		}
		return ""
	})
	p.writePolicies(t, good)
	eventually(t, 5*time.Second, func() string {
		if code, body := ready(); code != 200 {
			return fmt.Sprintf("%d %q", code, body)
		}
		return ""
	})

	down := startProxy(t, proxyOptions{env: map[string]string{"PGRANGER_BACKEND__DSN": "postgres://pgranger_svc:pgranger_svc@127.0.0.1:1/demo?sslmode=disable"}})
	code, body := adminGet(t, down, "GET", "/readyz")
	if code != 503 || body != "not ready: the backend is unreachable (pgranger cannot connect to backend.dsn as the service role; see the log)\n" {
		t.Errorf("readyz with the backend down: %d %q", code, body)
	}
	if code, _ := adminGet(t, down, "GET", "/healthz"); code != 200 {
		t.Errorf("healthz with the backend down: %d", code)
	}
	if strings.Contains(down.log(), "pgranger_svc:pgranger_svc") {
		t.Errorf("the log shows the backend password:\n%s", down.log())
	}
}

// SIGHUP: a user added to the file can log in, the open session goes on
// on the same backend connection, a rotated audit file is reopened, and a
// setting that needs a restart is named as such.
func TestSIGHUPReloadKeepsSessions(t *testing.T) {
	p := startProxy(t, proxyOptions{})
	bob := connect(t, p, "bob")
	pid := rows(t, bob, "SELECT pg_backend_pid()")[0]
	if _, err := pgx.Connect(ctx(t), p.dsn("dave", "dave-Secret-1")); sqlstate(err) != "28P01" {
		t.Fatalf("dave before the reload: %v", err)
	}
	cfgPath := filepath.Join(p.dir, "pgranger.toml")
	cfg, _ := os.ReadFile(cfgPath)
	next := strings.Replace(string(cfg), "pool-size = 20", "pool-size = 21", 1) +
		"\n[[identity.users]]\nname = \"dave\"\npassword = \"dave-Secret-1\"\nroles = [\"analyst\"]\ngroups = [\"analysts\"]\nattributes = { region = \"EU\" }\n"
	if err := os.WriteFile(cfgPath, []byte(next), 0o644); err != nil {
		t.Fatal(err)
	}
	auditPath := filepath.Join(p.dir, "audit.jsonl")
	eventually(t, 5*time.Second, func() string {
		if _, err := os.Stat(auditPath); err != nil {
			return "no audit file yet"
		}
		return ""
	})
	if err := os.Rename(auditPath, auditPath+".1"); err != nil {
		t.Fatal(err)
	}
	p.reload(t)
	dave, err := pgx.Connect(ctx(t), p.dsn("dave", "dave-Secret-1"))
	if err != nil {
		t.Fatalf("dave after the reload: %v", err)
	}
	defer dave.Close(context.Background())
	equalLines(t, "dave's rows (EU analyst)", rows(t, dave, "SELECT id FROM sales.orders ORDER BY id"), []string{"2", "4", "7"})
	if got := rows(t, bob, "SELECT pg_backend_pid()")[0]; got != pid {
		t.Errorf("bob's session moved from backend %s to %s", pid, got)
	}
	equalLines(t, "bob's rows", rows(t, bob, "SELECT id FROM sales.orders ORDER BY id"), []string{"1", "3", "5"})

	log := p.log()
	for _, want := range []string{"users=+dave", "applied=identity.users", "keys=backend.pool-size", "only take effect after a restart"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %s:\n%s", want, log)
		}
	}
	if strings.Contains(log, "dave-Secret-1") {
		t.Errorf("the log shows dave's password:\n%s", log)
	}
	eventually(t, 5*time.Second, func() string {
		for _, r := range auditLines(t, p) {
			if r["reqUser"] == "dave" {
				return ""
			}
		}
		return "dave's statement is not in the reopened audit file"
	})
	if v := value(scrape(t, p), "pgranger_config_reloads_total", "result=ok"); v != 1 {
		t.Errorf("reloads ok = %v", v)
	}

	// A broken file changes nothing and is counted.
	os.WriteFile(cfgPath, []byte(next+"\n[listen]\nbogus-key = 1\n"), 0o644)
	p.cmd.Process.Signal(syscall.SIGHUP)
	eventually(t, 5*time.Second, func() string {
		if v := value(scrape(t, p), "pgranger_config_reloads_total", "result=error"); v != 1 {
			return fmt.Sprintf("reload errors = %v", v)
		}
		return ""
	})
	again, err := pgx.Connect(ctx(t), p.dsn("dave", "dave-Secret-1"))
	if err != nil {
		t.Fatalf("dave after a failed reload: %v", err)
	}
	again.Close(context.Background())
}

// SIGHUP with users removed or changed: their open sessions end with
// FATAL 28000 naming the user and the change — an idle one at once, a
// busy one after its statement's whole result, one whose statement runs
// on 5 s after the reload then, its statement cancelled — while an
// unchanged user's session goes on on the same backend connection. New
// logins use the new entries.
func TestSIGHUPEndsSessionsOfRemovedAndChangedUsers(t *testing.T) {
	t.Parallel() // its own proxy and users; waits out the reload grace period
	const dave = "\n[[identity.users]]\nname = \"dave\"\npassword = \"dave\"\nroles = [\"analyst\"]\ngroups = [\"analysts\"]\nattributes = { region = \"EU\" }\n"
	p := startProxy(t, proxyOptions{extraConfig: dave})
	bobIdle, bobBusy, bobLong := connect(t, p, "bob"), connect(t, p, "bob"), connect(t, p, "bob")
	carol, alice, daveConn := connect(t, p, "carol"), connect(t, p, "alice"), connect(t, p, "dave")
	equalLines(t, "carol's rows before (EU)", rows(t, carol, "SELECT id FROM sales.orders ORDER BY id"), []string{"2", "4", "7"})
	davePid := rows(t, daveConn, "SELECT pg_backend_pid()")[0]

	// bob's second session is in the middle of a statement at the reload,
	// his third in a long one. The simple protocol: one message, so a
	// statement that is active on the backend is in flight in the proxy
	// (pgx's default mode would prepare first, and a Parse shows as
	// active too).
	simple := pgx.QueryExecModeSimpleProtocol
	const slow = "SELECT id, pg_catalog.pg_sleep(0.5)::text FROM sales.orders ORDER BY id"
	type result struct {
		rows []string
		err  error
	}
	busy := make(chan result, 1)
	go func() {
		r, err := tryRows(bobBusy, slow, simple)
		busy <- result{r, err}
	}()
	long := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		_, err := bobLong.Exec(ctx, "SELECT pg_catalog.pg_sleep(30)", simple)
		long <- result{nil, err}
	}()
	super, err := pgx.Connect(ctx(t), cluster.SuperDSN("demo"))
	if err != nil {
		t.Fatal(err)
	}
	defer super.Close(context.Background())
	eventually(t, 5*time.Second, func() string {
		var n int
		super.QueryRow(ctx(t), "SELECT count(*) FROM pg_stat_activity WHERE query ~ 'pg_sleep\\((0.5|30)\\)' AND state = 'active' AND pid <> pg_backend_pid()").Scan(&n)
		if n != 2 {
			return "bob's statements are not running"
		}
		return ""
	})
	reloaded := time.Now()

	cfgPath := filepath.Join(p.dir, "pgranger.toml")
	cfg, _ := os.ReadFile(cfgPath)
	next := string(cfg)
	for _, r := range [][2]string{
		{"[[identity.users]]\nname = \"bob\"\npassword = \"bob\"\nroles = [\"analyst\"]\ngroups = [\"analysts\"]\nattributes = { region = \"US\" }\n", ""},
		{"name = \"carol\"\npassword = \"carol\"\nroles = [\"support\"]\ngroups = [\"support\"]\nattributes = { region = \"EU\" }",
			"name = \"carol\"\npassword = \"carol\"\nroles = [\"support\"]\ngroups = [\"support\"]\nattributes = { region = \"US\" }"},
		{"name = \"alice\"\npassword = \"alice\"", "name = \"alice\"\npassword = \"alice-Next-2\""},
	} {
		if !strings.Contains(next, r[0]) {
			t.Fatalf("the config has no %q", r[0])
		}
		next = strings.Replace(next, r[0], r[1], 1)
	}
	if err := os.WriteFile(cfgPath, []byte(next), 0o644); err != nil {
		t.Fatal(err)
	}
	p.reload(t)

	fatal := func(what string, conn *pgx.Conn, want string) {
		t.Helper()
		wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := conn.PgConn().WaitForNotification(wctx)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Severity != "FATAL" || pe.Code != "28000" || pe.Message != want {
			t.Errorf("%s: %v, want FATAL 28000 %q", what, err, want)
		}
	}
	const bobGone = `pgranger: user "bob" was removed from the configuration; the session is closed`
	fatal("bob, idle", bobIdle, bobGone)
	fatal("carol, idle", carol, `pgranger: the roles, groups or attributes of user "carol" were changed in the configuration; log in again to use them`)
	fatal("alice, idle", alice, `pgranger: the password of user "alice" was changed in the configuration; log in again`)

	// The statement in flight delivered all its rows; then the session ended.
	select {
	case r := <-busy:
		if r.err != nil {
			t.Fatalf("bob's statement in flight at the reload: %v", r.err)
		}
		equalLines(t, "bob's statement in flight at the reload", r.rows, []string{"1|", "3|", "5|"})
	case <-time.After(10 * time.Second):
		t.Fatal("bob's statement did not finish")
	}
	fatal("bob, after the statement in flight", bobBusy, bobGone)

	// A statement still running 5 s after the reload is cut short.
	select {
	case r := <-long:
		var pe *pgconn.PgError
		if !errors.As(r.err, &pe) || pe.Severity != "FATAL" || pe.Code != "28000" || pe.Message != bobGone {
			t.Errorf("bob's 30 s statement: %v, want FATAL 28000 %q", r.err, bobGone)
		}
		if d := time.Since(reloaded); d < 4*time.Second || d > 12*time.Second {
			t.Errorf("bob's 30 s statement ended %s after the reload, want about 5 s", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("bob's 30 s statement was not ended")
	}
	eventually(t, 10*time.Second, func() string {
		var n int
		super.QueryRow(ctx(t), "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(30)%' AND state = 'active' AND pid <> pg_backend_pid()").Scan(&n)
		if n != 0 {
			return "bob's 30 s statement still runs on the backend"
		}
		return ""
	})

	// dave's entry did not change: his session goes on where it was.
	if got := rows(t, daveConn, "SELECT pg_backend_pid()")[0]; got != davePid {
		t.Errorf("dave's session moved from backend %s to %s", davePid, got)
	}
	equalLines(t, "dave's rows", rows(t, daveConn, "SELECT id FROM sales.orders ORDER BY id"), []string{"2", "4", "7"})
	eventually(t, 5*time.Second, func() string {
		if v := value(scrape(t, p), "pgranger_connections_active"); v != 1 {
			return fmt.Sprintf("connections_active = %v, want 1 (dave's session)", v)
		}
		return ""
	})

	// New logins: bob is unknown, alice has her new password, carol her
	// new attributes.
	if _, err := pgx.Connect(ctx(t), p.dsn("bob", "bob")); sqlstate(err) != "28P01" {
		t.Errorf("bob after the reload: %v, want 28P01", err)
	}
	if _, err := pgx.Connect(ctx(t), p.dsn("alice", "alice")); sqlstate(err) != "28P01" {
		t.Errorf("alice with her old password: %v, want 28P01", err)
	}
	aliceNew, err := pgx.Connect(ctx(t), p.dsn("alice", "alice-Next-2"))
	if err != nil {
		t.Fatalf("alice with her new password: %v", err)
	}
	defer aliceNew.Close(context.Background())
	equalLines(t, "alice (no row filter)", rows(t, aliceNew, "SELECT count(*) FROM sales.orders"), []string{"8"})
	carolNew := connect(t, p, "carol")
	equalLines(t, "carol's rows after (US)", rows(t, carolNew, "SELECT id FROM sales.orders ORDER BY id"), []string{"1", "3", "5"})

	log := p.log()
	for _, want := range []string{
		"users=\"~alice -bob ~carol\"", `sessions_ended="alice:1 bob:3 carol:1"`,
		`msg="session ended: the user was removed from the configuration" user=bob`,
		`msg="session ended: the user's password was changed in the configuration" user=alice`,
		`msg="session ended: the user's roles, groups or attributes were changed in the configuration" user=carol`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %s:\n%s", want, log)
		}
	}
	if strings.Contains(log, "alice-Next-2") {
		t.Errorf("the log shows alice's password:\n%s", log)
	}
}

// The bundle's audit filters (serviceConfig ranger.plugin.audit.filters)
// and audit exclusions decide which accesses are recorded, as in Ranger's
// plugins: a filtered table is not audited, other reads are, and the
// DENIED filter audits a denial.
func TestAuditFollowsAuditFilters(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "examples/policies/hive.json"))
	if err != nil {
		t.Fatal(err)
	}
	var bundle map[string]any
	json.Unmarshal(doc, &bundle)
	cfg, _ := bundle["serviceConfig"].(map[string]any)
	if cfg == nil {
		cfg = map[string]any{}
	}
	cfg["ranger.plugin.audit.filters"] = `[ {'accessResult': 'DENIED', 'isAudited': true},
		{'resources': {'database': {'values': ['sales']}, 'table': {'values': ['orders_plain']}, 'column': {'values': ['*']}}, 'isAudited': false},
		{'users': ['alice'], 'isAudited': false} ]`
	bundle["serviceConfig"] = cfg
	filtered, _ := json.Marshal(bundle)
	p := startProxy(t, proxyOptions{policies: filtered})
	conn := connect(t, p, "bob")
	simple := pgx.QueryExecModeSimpleProtocol
	rows(t, conn, "SELECT id FROM sales.orders_plain", simple) // filtered table: not audited
	rows(t, conn, "SELECT id FROM sales.orders", simple)       // audited
	if _, err := tryRows(conn, "SELECT salary FROM hr.employees", simple); sqlstate(err) != "42501" {
		t.Fatalf("want a denial, got %v", err)
	}
	alice := connect(t, p, "alice")
	rows(t, alice, "SELECT 1", simple) // alice is filtered out
	eventually(t, 5*time.Second, func() string {
		if n := len(auditLines(t, p)); n < 2 {
			return fmt.Sprintf("%d records", n)
		}
		return ""
	})
	time.Sleep(200 * time.Millisecond) // a further record would be written by now
	var got []string
	for _, r := range auditLines(t, p) {
		res, _ := r["resource"].(string)
		got = append(got, fmt.Sprint(r["reqUser"], " ", r["action"], " ", res, " ", r["result"]))
	}
	equalLines(t, "audited", got, []string{"bob SELECT sales/orders/id 1", "bob SELECT hr/employees/salary 0"})
}
