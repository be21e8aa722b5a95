package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

// One JSON line per statement, with Ranger's audit field names, for an
// allowed masked read and denials (of a column, a table write, a udf),
// each naming the resource, access and policy that decided; never the
// statement's text.
func TestAuditRecords(t *testing.T) {
	p := startProxy(t, proxyOptions{})
	conn := connect(t, p, "bob")
	rows(t, conn, "SELECT ssn FROM sales.orders WHERE customer = 'Ada Lovelace'", pgx.QueryExecModeSimpleProtocol)
	tryRows(conn, "SELECT salary FROM hr.employees", pgx.QueryExecModeSimpleProtocol)
	tryRows(conn, "INSERT INTO sales.orders (id) VALUES (999)", pgx.QueryExecModeSimpleProtocol)
	tryRows(conn, "SELECT public.no_such_udf(1)", pgx.QueryExecModeSimpleProtocol)

	var recs []map[string]any
	eventually(t, 5*time.Second, func() string {
		data, _ := os.ReadFile(filepath.Join(p.dir, "audit.jsonl"))
		recs = nil
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil {
				recs = append(recs, m)
			}
		}
		if len(recs) < 4 {
			return "want four audit records, got: " + string(data)
		}
		if strings.Contains(string(data), "Ada Lovelace") {
			t.Fatalf("the audit log contains a statement literal:\n%s", data)
		}
		return ""
	})
	allowed, denied := recs[len(recs)-4], recs[len(recs)-3]
	for k, want := range map[string]any{"reqUser": "bob", "repo": "demo_hive", "repoType": 3.0, "resource": "sales/orders/customer,ssn",
		"resType": "@column", "access": "select", "action": "SELECT", "result": 1.0, "policy": 1.0, "enforcer": "ranger-acl",
		"agent": "pgranger", "cliIP": "127.0.0.1", "cluster": "demo"} {
		if allowed[k] != want {
			t.Errorf("allowed record %s = %v, want %v (%v)", k, allowed[k], want, allowed)
		}
	}
	if ids, _ := allowed["maskPolicies"].([]any); len(ids) == 0 {
		t.Errorf("allowed record has no mask policies: %v", allowed)
	}
	if f, _ := allowed["rowFilterPolicies"].([]any); len(f) != 1 || f[0] != 20.0 {
		t.Errorf("row filter policies = %v, want [20]", allowed["rowFilterPolicies"])
	}
	for k, want := range map[string]any{"reqUser": "bob", "action": "SELECT", "result": 0.0, "resource": "hr/employees/salary", "resType": "@column", "access": "select", "policy": 3.0} {
		if denied[k] != want {
			t.Errorf("denied record %s = %v, want %v (%v)", k, denied[k], want, denied)
		}
	}
	if fp, _ := denied["fingerprint"].(string); fp == "" {
		t.Errorf("denied record has no fingerprint: %v", denied)
	}
	// No policy grants bob update: policy 0.
	for k, want := range map[string]any{"action": "INSERT", "result": 0.0, "resource": "sales/orders", "resType": "@table", "access": "update", "policy": 0.0} {
		if recs[len(recs)-2][k] != want {
			t.Errorf("denied write record %s = %v, want %v (%v)", k, recs[len(recs)-2][k], want, recs[len(recs)-2])
		}
	}
	for k, want := range map[string]any{"action": "SELECT", "result": 0.0, "resource": "public/no_such_udf", "resType": "@udf", "access": "select", "policy": 0.0} {
		if recs[len(recs)-1][k] != want {
			t.Errorf("denied udf record %s = %v, want %v (%v)", k, recs[len(recs)-1][k], want, recs[len(recs)-1])
		}
	}
}

// protoStep sends msgs and reads the answers up to a ReadyForQuery, or up
// to a PortalSuspended when msgs end with a Flush; one line per message.
func protoStep(t *testing.T, fe *pgproto3.Frontend, msgs ...pgproto3.FrontendMessage) []string {
	t.Helper()
	for _, m := range msgs {
		fe.Send(m)
	}
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	_, flush := msgs[len(msgs)-1].(*pgproto3.Flush)
	var got []string
	for {
		m, err := fe.Receive()
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		line := strings.TrimPrefix(fmt.Sprintf("%T", m), "*pgproto3.")
		switch m := m.(type) {
		case *pgproto3.DataRow:
			var vals []string
			for _, v := range m.Values {
				vals = append(vals, string(v))
			}
			line += " " + strings.Join(vals, "|")
		case *pgproto3.CommandComplete:
			line += " " + string(m.CommandTag)
		case *pgproto3.ErrorResponse:
			line += " " + m.Code
		case *pgproto3.ReadyForQuery:
			line += " " + string(m.TxStatus)
		}
		got = append(got, line)
		if _, ok := m.(*pgproto3.ReadyForQuery); ok && !flush {
			return got
		}
		if _, ok := m.(*pgproto3.PortalSuspended); ok && flush {
			return got
		}
	}
}

// A portal read in several row-limited Executes is one execution: one
// audit record with the rows of all its Executes, written when the
// portal completes, is closed, is replaced by a Bind of the same name, or
// its transaction ends — and counted once in pgranger_statements_total.
func TestAuditPortalReadInSeveralExecutes(t *testing.T) {
	p := startProxy(t, proxyOptions{})
	fe := hijacked(t, p.dsn("bob", "bob"), 30*time.Second).Frontend
	const sql = "SELECT id, ssn FROM sales.orders ORDER BY id" // bob: orders 1, 3, 5
	step := func(what string, want []string, msgs ...pgproto3.FrontendMessage) {
		t.Helper()
		equalLines(t, what, protoStep(t, fe, msgs...), want)
	}
	exec := func(portal string, max uint32) *pgproto3.Execute {
		return &pgproto3.Execute{Portal: portal, MaxRows: max}
	}
	bind := func(portal string) *pgproto3.Bind {
		return &pgproto3.Bind{DestinationPortal: portal, PreparedStatement: "s1"}
	}
	sync, flush := &pgproto3.Sync{}, &pgproto3.Flush{}

	step("BEGIN", []string{"CommandComplete BEGIN", "ReadyForQuery T"}, &pgproto3.Query{String: "BEGIN"})
	// 1. Completed in two Executes (a pause between them, as a client
	// working through its rows).
	step("p1, first Execute", []string{"ParseComplete", "BindComplete", "DataRow 1|xxx-xx-1111", "DataRow 3|xxx-xx-3333", "PortalSuspended", "ReadyForQuery T"},
		&pgproto3.Parse{Name: "s1", Query: sql}, bind("p1"), exec("p1", 2), sync)
	time.Sleep(300 * time.Millisecond)
	step("p1, second Execute", []string{"DataRow 5|xxx-xx-5555", "CommandComplete SELECT 1", "ReadyForQuery T"}, exec("p1", 2), sync)
	// 2. Closed after one Execute.
	step("p2", []string{"BindComplete", "DataRow 1|xxx-xx-1111", "PortalSuspended", "ReadyForQuery T"}, bind("p2"), exec("p2", 1), sync)
	step("close p2", []string{"CloseComplete", "ReadyForQuery T"}, &pgproto3.Close{ObjectType: 'P', Name: "p2"}, sync)
	// 3. Open when the transaction commits.
	step("p3", []string{"BindComplete", "DataRow 1|xxx-xx-1111", "DataRow 3|xxx-xx-3333", "PortalSuspended", "ReadyForQuery T"}, bind("p3"), exec("p3", 2), sync)
	step("COMMIT", []string{"CommandComplete COMMIT", "ReadyForQuery I"}, &pgproto3.Query{String: "COMMIT"})
	// 4. The unnamed portal, replaced by a Bind of the unnamed portal in
	// the same implicit transaction; the new one read in one Execute.
	step("unnamed, first", []string{"BindComplete", "DataRow 1|xxx-xx-1111", "PortalSuspended"}, bind(""), exec("", 1), flush)
	step("unnamed, second", []string{"BindComplete", "DataRow 1|xxx-xx-1111", "DataRow 3|xxx-xx-3333", "DataRow 5|xxx-xx-5555", "CommandComplete SELECT 3", "ReadyForQuery I"},
		bind(""), exec("", 0), sync)
	// 5. Suspended when the implicit transaction ends at Sync.
	step("unnamed, implicit transaction", []string{"BindComplete", "DataRow 1|xxx-xx-1111", "DataRow 3|xxx-xx-3333", "PortalSuspended", "ReadyForQuery I"}, bind(""), exec("", 2), sync)

	var recs []map[string]any
	eventually(t, 5*time.Second, func() string {
		if recs = auditLines(t, p); len(recs) < 8 {
			return fmt.Sprintf("want 8 audit records, got %d", len(recs))
		}
		return ""
	})
	time.Sleep(200 * time.Millisecond) // a ninth would be written by now
	if recs = auditLines(t, p); len(recs) != 8 {
		t.Fatalf("want exactly 8 audit records, got %d: %v", len(recs), recs)
	}
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprint(r["action"], " rows=", r["rowsAffected"]))
	}
	equalLines(t, "audit records (action, rows)", got, []string{
		"BEGIN rows=0", "SELECT rows=3", "SELECT rows=1", "COMMIT rows=0", "SELECT rows=2", "SELECT rows=1", "SELECT rows=3", "SELECT rows=2",
	})
	host, _ := os.Hostname()
	for i, rec := range recs {
		if rec["action"] != "SELECT" {
			continue
		}
		exp := map[string]any{"reqUser": "bob", "repo": "demo_hive", "repoType": 3.0, "enforcer": "ranger-acl", "agent": "pgranger",
			"agentHost": host, "cliIP": "127.0.0.1", "cluster": "demo", "roles": []any{"analyst"}, "authMethod": "scram-sha-256",
			"policy_version": 1.0, "action": "SELECT", "access": "select", "resType": "@column", "resource": "sales/orders/id,ssn",
			"result": 1.0, "policy": 1.0, "maskPolicies": []any{10.0, 11.0, 13.0}, "rowFilterPolicies": []any{20.0},
			"rowsAffected": rec["rowsAffected"], "evtTime": rec["evtTime"], "seq_num": rec["seq_num"], "fingerprint": rec["fingerprint"],
			"durationMs": rec["durationMs"]}
		gotJSON, _ := json.Marshal(rec)
		wantJSON, _ := json.Marshal(exp)
		if string(gotJSON) != string(wantJSON) {
			t.Errorf("record %d:\n got %s\nwant %s", i, gotJSON, wantJSON)
		}
		if d, ok := rec["durationMs"].(float64); !ok || d < 0 || d > 10000 {
			t.Errorf("record %d: durationMs %v", i, rec["durationMs"])
		}
	}
	// The first portal's record spans both Executes and the pause.
	if d, _ := recs[1]["durationMs"].(float64); d < 300 {
		t.Errorf("p1's durationMs = %v, want at least the 300 ms between its Executes", d)
	}
	fams := scrape(t, p)
	if v := value(fams, "pgranger_statements_total", "kind=SELECT", "result=ok"); v != 6 {
		t.Errorf("pgranger_statements_total{kind=SELECT,result=ok} = %v, want 6 (one per portal)", v)
	}
	if v := value(fams, "pgranger_audit_records_total"); v != 8 {
		t.Errorf("pgranger_audit_records_total = %v, want 8", v)
	}
}

// JDBC with a fetch size reads through a row-limited portal: one audit
// record with every row the application read.
func TestAuditJDBCFetchSize(t *testing.T) {
	java, cp := jdbcProgram(t)
	p := startProxy(t, proxyOptions{})
	run := runClient(t, time.Minute, "", nil, java, "-cp", cp, "ClientCheck", "fetch", jdbcURL(p.addr, "bob", "bob"),
		"SELECT id, ssn FROM sales.orders ORDER BY id", "2")
	if run.err != nil {
		t.Fatalf("%v\n%s%s", run.err, run.stdout, run.stderr)
	}
	expectLines(t, "JDBC fetch size 2", run, []string{"fetch: 1|xxx-xx-1111", "fetch: 3|xxx-xx-3333", "fetch: 5|xxx-xx-5555"})
	var sel []map[string]any
	eventually(t, 5*time.Second, func() string {
		sel = nil
		for _, r := range auditLines(t, p) {
			if r["action"] == "SELECT" {
				sel = append(sel, r)
			}
		}
		if len(sel) < 1 {
			return "no SELECT record yet"
		}
		return ""
	})
	time.Sleep(200 * time.Millisecond)
	sel = nil
	for _, r := range auditLines(t, p) {
		if r["action"] == "SELECT" {
			sel = append(sel, r)
		}
	}
	if len(sel) != 1 || sel[0]["rowsAffected"] != 3.0 || sel[0]["resource"] != "sales/orders/id,ssn" || sel[0]["reqUser"] != "bob" {
		t.Errorf("want one SELECT record of sales/orders/id,ssn by bob with rowsAffected 3, got %v", sel)
	}
}
