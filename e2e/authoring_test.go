package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/ranger/rangeradmin"
	"github.com/pgranger/pgranger/ranger/rangertest"
)

// Authoring end to end (docs/authoring.md): the built binary with
// authoring.enabled, PostgreSQL, psql and pgx, against both policy
// sources — the fake Ranger Admin (ranger/rangertest) and the policy file
// — with the same statements and the same expectations.

// authoringUsers adds to the demo's static users a super user (root) and a
// user no policy names (dave).
const authoringUsers = `
[[identity.users]]
name = "root"
password = "root"
groups = ["dba"]

[[identity.users]]
name = "dave"
password = "dave"
groups = ["contractors"]
`

// authoringPolicies is the demo bundle with authoring rights: compliance
// (alice) has delegated admin for select on sales, alice on the schema
// other, and root is a super user.
func authoringPolicies(t *testing.T) policyDoc {
	t.Helper()
	d := demoPolicies(t)
	p1 := d.policy(t, 1)
	compliance := accessItem([]string{"compliance"}, "select")
	compliance["delegateAdmin"] = true
	p1["policyItems"] = append(p1["policyItems"].([]any), compliance)
	admin := accessItem(nil, "select")
	admin["users"] = []string{"alice"}
	admin["delegateAdmin"] = true
	d.add(map[string]any{"id": 30, "name": "other admin", "isEnabled": true,
		"resources": map[string]any{"database": map[string]any{"values": []string{"other"}}, "table": map[string]any{"values": []string{"*"}},
			"column": map[string]any{"values": []string{"*"}}},
		"policyItems": []any{admin}})
	cfg, _ := d["serviceConfig"].(map[string]any)
	if cfg == nil {
		cfg = map[string]any{}
	}
	cfg["ranger.plugin.super.users"] = "root"
	d["serviceConfig"] = cfg
	return d
}

// authorEnv is a proxy with authoring on, and a view of its policy source.
type authorEnv struct {
	name string
	p    *proxy
	srv  *rangertest.Server // nil for the file source
}

func (e *authorEnv) policies(t *testing.T) *ranger.ServicePolicies {
	t.Helper()
	if e.srv != nil {
		sp, err := e.srv.Policies()
		if err != nil {
			t.Fatal(err)
		}
		return sp
	}
	data, err := os.ReadFile(filepath.Join(e.p.dir, "policies/hive.json"))
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ranger.ParseServicePolicies(data)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func (e *authorEnv) tags(t *testing.T) *ranger.ServiceTags {
	t.Helper()
	if e.srv != nil {
		st, err := e.srv.Tags()
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	data, err := os.ReadFile(filepath.Join(e.p.dir, "policies/tags.json"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := ranger.ParseServiceTags(data)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// sourceState is what "nothing was written" compares: Ranger's write
// requests, or the policy and tag files' bytes.
func (e *authorEnv) sourceState(t *testing.T) string {
	t.Helper()
	if e.srv != nil {
		return fmt.Sprintf("%d writes", e.srv.Writes())
	}
	a, _ := os.ReadFile(filepath.Join(e.p.dir, "policies/hive.json"))
	b, _ := os.ReadFile(filepath.Join(e.p.dir, "policies/tags.json"))
	return string(a) + string(b)
}

func startAuthoringFile(t *testing.T) *authorEnv {
	p := startProxy(t, proxyOptions{policies: authoringPolicies(t).bytes(t), tags: []byte(`{"serviceName":"demo_hive","tagVersion":1}`),
		env: map[string]string{"PGRANGER_AUTHORING__ENABLED": "true"}, extraConfig: authoringUsers})
	return &authorEnv{name: "file", p: p}
}

func startAuthoringRanger(t *testing.T) *authorEnv {
	srv := newRanger(t)
	srv.SetDocument(rangeradmin.DocPolicies, authoringPolicies(t).bytes(t))
	srv.SetDocument(rangeradmin.DocTags, []byte(`{"serviceName":"demo_hive","tagVersion":1}`))
	// pgranger's account writes policies and tags (a Ranger admin) and
	// speaks for grantors (policy.grantrevoke.auth.users).
	srv.AddAccount(rangerUser, rangerPassword, true)
	srv.SetGrantRevokeUsers(rangerUser)
	if err := srv.SetUsers(map[string][]string{"alice": {"compliance"}, "bob": {"analysts"}, "carol": {"support"}, "root": {"dba"}, "dave": {"contractors"}}); err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, proxyOptions{extraConfig: authoringUsers, env: map[string]string{
		"PGRANGER_AUTHORING__ENABLED":               "true",
		"PGRANGER_POLICY__SOURCE":                   "ranger",
		"PGRANGER_POLICY__RANGER__URL":              srv.URL(),
		"PGRANGER_POLICY__RANGER__ADMIN_USER":       rangerUser,
		"PGRANGER_POLICY__RANGER__ADMIN_PASSWORD":   rangerPassword,
		"PGRANGER_POLICY__RANGER__POLL_INTERVAL_MS": "10000", // the change must come from the reload, not a poll
		"PGRANGER_POLICY__RANGER__TIMEOUT_SECS":     "5",
		"PGRANGER_POLICY__CACHE_TTL_SECS":           "60",
	}})
	return &authorEnv{name: "ranger", p: p, srv: srv}
}

// bothSources runs f against a proxy with the file source and one with the
// fake Ranger Admin.
func bothSources(t *testing.T, f func(t *testing.T, e *authorEnv)) {
	t.Run("file", func(t *testing.T) { f(t, startAuthoringFile(t)) })
	t.Run("ranger", func(t *testing.T) { f(t, startAuthoringRanger(t)) })
}

func wantPgError(t *testing.T, err error, code, msg string) {
	t.Helper()
	pe := pgErr(err)
	if pe == nil || pe.Code != code || pe.Message != msg {
		t.Fatalf("got %v\nwant %s: %s", err, code, msg)
	}
}

// psqlAs runs psql (aligned output, as a user reads it) against p.
func psqlAs(t *testing.T, p *proxy, user, sql string) (string, string, error) {
	t.Helper()
	return psqlDSN(t, p.dsn(user, user), "", "-c", sql)
}

// Authoring off (the default): refused with the key in the hint, and
// never sent to PostgreSQL (which would refuse the label provider with
// 22023, or run the GRANT on its own objects).
func TestAuthoringOffRefuses(t *testing.T) {
	p := startProxy(t, proxyOptions{env: map[string]string{"PGRANGER_AUTHORING__ENABLED": "false"}})
	conn := connect(t, p, "alice")
	for _, sql := range []string{
		"GRANT SELECT ON sales.orders TO carol",
		"SECURITY LABEL FOR pgranger ON COLUMN sales.orders.ssn IS 'MASK'",
		"CREATE POLICY p ON sales.orders USING (true)",
	} {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
			_, err := conn.Exec(ctx(t), sql, mode)
			pe := pgErr(err)
			kind := strings.Join(strings.Fields(sql)[:2], " ")
			if strings.HasPrefix(sql, "GRANT") {
				kind = "GRANT"
			}
			if pe == nil || pe.Code != "42501" || pe.Message != fmt.Sprintf(`pgranger: %s statements are not allowed through pgranger (user "alice")`, kind) ||
				!strings.Contains(pe.Hint, "[authoring] enabled = true") {
				t.Errorf("%s (%v): %v hint %q", sql, mode, err, hintOf(err))
			}
		}
	}
}

func hintOf(err error) string {
	if pe := pgErr(err); pe != nil {
		return pe.Hint
	}
	return ""
}

// A delegated admin grants; the grantee reads at once. A user without
// delegated admin is refused and nothing reaches the source.
func TestAuthoringGrant(t *testing.T) {
	bothSources(t, func(t *testing.T, e *authorEnv) {
		bob := connect(t, e.p, "bob")
		_, err := tryRows(bob, "SELECT id FROM other.ungoverned")
		wantPgError(t, err, "42501", `pgranger: permission denied: user "bob" has no select access to column other.ungoverned.id`)

		before := e.sourceState(t)
		_, err = bob.Exec(ctx(t), "GRANT SELECT ON other.ungoverned TO bob")
		wantPgError(t, err, "42501", `pgranger: permission denied: user "bob" may not grant select on table other.ungoverned: it has no delegated admin for select there`)
		if after := e.sourceState(t); after != before {
			t.Fatalf("a refused GRANT reached the source")
		}

		// alice grants with psql (simple protocol); bob reads within a second.
		out, errOut, err := psqlAs(t, e.p, "alice", "GRANT SELECT ON other.ungoverned TO bob")
		if err != nil || strings.TrimSpace(out) != "GRANT" {
			t.Fatalf("psql: %q %q %v\n%s", out, errOut, err, e.p.log())
		}
		granted := time.Now()
		eventually(t, time.Second, func() string {
			if _, err := tryRows(bob, "SELECT id FROM other.ungoverned"); err != nil {
				return "bob still cannot read after the GRANT: " + err.Error()
			}
			return ""
		})
		if took := time.Since(granted); took > time.Second {
			t.Errorf("the grant took %s to apply", took)
		}
		sp := e.policies(t)
		g := sp.Policies[len(sp.Policies)-1]
		if !strings.HasPrefix(g.Name, "grant-") || g.Description != "created by grant" || len(g.PolicyItems) != 1 ||
			strings.Join(g.PolicyItems[0].Users, ",") != "bob" || g.Resources["database"].Values[0] != "other" {
			t.Errorf("the grant's policy: %+v", g)
		}
		if e.srv != nil {
			log := strings.Join(e.srv.WriteLog(), "\n")
			if !strings.Contains(log, "POST /service/plugins/secure/services/grant/demo_hive 200") {
				t.Errorf("Ranger saw:\n%s", log)
			}
		}

		// REVOKE through pgx (extended protocol).
		alice := connect(t, e.p, "alice")
		if _, err = alice.Exec(ctx(t), "REVOKE SELECT ON other.ungoverned FROM bob"); err != nil {
			t.Fatal(err)
		}
		if _, err := tryRows(bob, "SELECT id FROM other.ungoverned"); pgErr(err) == nil || pgErr(err).Code != "42501" {
			t.Errorf("bob reads after the REVOKE: %v", err)
		}
	})
}

// noticeConn connects as user and collects the notices it receives.
func noticeConn(t *testing.T, p *proxy, user string) (*pgx.Conn, *[]*pgconn.Notice) {
	t.Helper()
	cfg, err := pgx.ParseConfig(p.dsn(user, user))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	notices := &[]*pgconn.Notice{}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		*notices = append(*notices, n)
		mu.Unlock()
	}
	conn, err := pgx.ConnectConfig(ctx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn, notices
}

func TestAuthoringRevokeNotice(t *testing.T) {
	bothSources(t, func(t *testing.T, e *authorEnv) {
		alice, notices := noticeConn(t, e.p, "alice")
		// analysts read sales through policy 1 (sales, every table): a REVOKE
		// on one table changes nothing, and says so.
		if _, err := alice.Exec(ctx(t), `REVOKE SELECT ON sales.orders FROM "group:analysts"`); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, n := range *notices {
			got = append(got, n.Severity+" "+n.Code+": "+n.Message)
		}
		want := []string{
			"NOTICE 00000: REVOKE changed nothing on sales.orders: no policy has exactly the resources database=sales, table=orders, column=*, and Ranger revokes only there",
			`NOTICE 00000: group analysts still has select on sales.orders through policy 1 "sales - all tables, columns"`,
		}
		equalLines(t, "notices", got, want)
	})
}

// CREATE POLICY merges into the row-filter policy written in Ranger; DROP
// POLICY removes only its item.
func TestAuthoringRowFilter(t *testing.T) {
	bothSources(t, func(t *testing.T, e *authorEnv) {
		alice := connect(t, e.p, "alice")
		all := rows(t, alice, "SELECT id FROM sales.orders ORDER BY id")
		if len(all) != 8 {
			t.Fatalf("alice sees %v before", all)
		}
		if _, err := alice.Exec(ctx(t), "CREATE POLICY us_only ON sales.orders TO alice USING (region = 'US')"); err != nil {
			t.Fatal(err)
		}
		if _, err := alice.Exec(ctx(t), `CREATE POLICY dave_eu ON sales.orders TO "user:dave" USING (region = 'EU')`, pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatal(err)
		}
		equalLines(t, "alice after CREATE POLICY", rows(t, alice, "SELECT id FROM sales.orders ORDER BY id"), []string{"1", "3", "5"})
		var p *ranger.RangerPolicy
		for i := range e.policies(t).Policies {
			if q := e.policies(t).Policies[i]; q.ID == 20 {
				p = &q
			}
		}
		if p == nil || p.Name != "orders by region" || len(p.RowFilterPolicyItems) != 3 {
			t.Fatalf("policy 20 after CREATE POLICY: %+v", p)
		}
		wantFilters := []string{
			"region = '${{USER.region}}'",
			"(region = 'US') AND 'pgranger-policy:us_only' IS NOT NULL",
			"(region = 'EU') AND 'pgranger-policy:dave_eu' IS NOT NULL",
		}
		var got []string
		for _, it := range p.RowFilterPolicyItems {
			got = append(got, it.RowFilterInfo.FilterExpr)
		}
		equalLines(t, "items in order, new ones last", got, wantFilters)

		if _, err := alice.Exec(ctx(t), "DROP POLICY us_only ON sales.orders"); err != nil {
			t.Fatal(err)
		}
		if got := rows(t, alice, "SELECT id FROM sales.orders ORDER BY id"); len(got) != 8 {
			t.Errorf("alice after DROP POLICY sees %v", got)
		}
		got = nil
		for _, q := range e.policies(t).Policies {
			if q.ID == 20 {
				for _, it := range q.RowFilterPolicyItems {
					got = append(got, it.RowFilterInfo.FilterExpr)
				}
			}
		}
		equalLines(t, "DROP POLICY removes only its item", got, []string{wantFilters[0], wantFilters[2]})

		_, err := alice.Exec(ctx(t), "CREATE POLICY p ON sales.orders USING (id::text = '1')")
		wantPgError(t, err, "0A000", "pgranger: the :: cast is not allowed in a policy expression: HiveServer2 and Spark read the same policy and do not have it; write CAST(x AS type)")
		_, err = alice.Exec(ctx(t), "CREATE POLICY p ON sales.orders AS RESTRICTIVE USING (true)")
		wantPgError(t, err, "0A000", "pgranger: AS RESTRICTIVE is not supported: Ranger combines no filters; of a table's row-filter items the first that matches the user decides")
	})
}

// A mask label gives Hive's exact bytes to one group and another mask to
// another.
func TestAuthoringMaskLabel(t *testing.T) {
	bothSources(t, func(t *testing.T, e *authorEnv) {
		alice := connect(t, e.p, "alice")
		if _, err := alice.Exec(ctx(t), `SECURITY LABEL FOR pgranger ON COLUMN sales.orders.email IS 'MASK_NONE TO GROUP compliance; MASK_SHOW_FIRST_4 TO GROUP analysts; MASK_HASH'`); err != nil {
			t.Fatal(err)
		}
		bob := connect(t, e.p, "bob")
		carol := connect(t, e.p, "carol")
		// Hive's mask_show_first_n: the first four kept, letters x, the rest kept.
		equalLines(t, "bob (analysts)", rows(t, bob, "SELECT email FROM sales.orders WHERE id = 1"), []string{"ada@xxxxxxx.xxx"})
		equalLines(t, "carol (support)", rows(t, carol, "SELECT email FROM sales.orders WHERE id = 2"), []string{sha256hex("alan@example.com")})
		equalLines(t, "alice (compliance)", rows(t, alice, "SELECT email FROM sales.orders WHERE id = 1"), []string{"ada@example.com"})
		// The column's mask policy (policy 11, written in Ranger) now holds the label's items.
		for _, q := range e.policies(t).Policies {
			if q.ID == 11 {
				var items []string
				for _, it := range q.DataMaskPolicyItems {
					items = append(items, strings.Join(it.Groups, ",")+":"+it.DataMaskInfo.DataMaskType)
				}
				equalLines(t, "policy 11", items, []string{"compliance:MASK_NONE", "analysts:MASK_SHOW_FIRST_4", "public:MASK_HASH"})
			}
		}
		_, err := bob.Exec(ctx(t), `SECURITY LABEL FOR pgranger ON COLUMN sales.orders.email IS NULL`)
		wantPgError(t, err, "42501", `pgranger: permission denied: user "bob" may not set the mask of column sales.orders.email: it has no delegated admin for select there`)
	})
}

// Tags land in the tag store (a super user's).
func TestAuthoringTags(t *testing.T) {
	bothSources(t, func(t *testing.T, e *authorEnv) {
		alice := connect(t, e.p, "alice")
		before := e.sourceState(t)
		_, err := alice.Exec(ctx(t), `SECURITY LABEL FOR pgranger_tags ON COLUMN sales.orders.email IS 'PII'`)
		wantPgError(t, err, "42501", `pgranger: permission denied: user "alice" may not write the tags of sales.orders.email: only a super user may write tags`)
		if e.sourceState(t) != before {
			t.Fatal("a refused tag label reached the source")
		}
		out, errOut, err := psqlAs(t, e.p, "root", `SECURITY LABEL FOR pgranger_tags ON COLUMN sales.orders.email IS 'PII, GDPR'`)
		if err != nil || strings.TrimSpace(out) != "SECURITY LABEL" {
			t.Fatalf("psql: %q %q %v", out, errOut, err)
		}
		col := map[string]ranger.RangerPolicyResource{"database": {Values: []string{"sales"}}, "table": {Values: []string{"orders"}}, "column": {Values: []string{"email"}}}
		st := e.tags(t)
		if got := ranger.TagTypes(st.ResourceTags(col)); strings.Join(got, ",") != "PII,GDPR" || st.TagVersion != 2 {
			t.Errorf("tag store: %v version %d", got, st.TagVersion)
		}
		root := connect(t, e.p, "root")
		if _, err := root.Exec(ctx(t), `SECURITY LABEL FOR pgranger_tags ON COLUMN sales.orders.email IS NULL`); err != nil {
			t.Fatal(err)
		}
		if got := e.tags(t).ResourceTags(col); len(got) != 0 {
			t.Errorf("after IS NULL: %v", got)
		}
	})
}

// Inside a transaction block: 25001, and the block is aborted as by any
// error; in both protocols.
func TestAuthoringInTransactionBlock(t *testing.T) {
	e := startAuthoringFile(t)
	alice := connect(t, e.p, "alice")
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		tx, err := alice.Begin(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		_, err = tx.Exec(ctx(t), "GRANT SELECT ON other.ungoverned TO bob", mode)
		wantPgError(t, err, "25001", "pgranger: GRANT cannot run inside a transaction block")
		_, err = tx.Exec(ctx(t), "SELECT 1", mode)
		if pe := pgErr(err); pe == nil || pe.Code != "25P02" {
			t.Errorf("%v: after the refusal the block is aborted: %v", mode, err)
		}
		tx.Rollback(ctx(t))
	}
	out, errOut, err := psqlDSN(t, e.p.dsn("alice", "alice"), "BEGIN;\nGRANT SELECT ON other.ungoverned TO bob;\n")
	if err == nil || !strings.Contains(errOut, "ERROR:  pgranger: GRANT cannot run inside a transaction block") {
		t.Errorf("psql: %q %q %v", out, errOut, err)
	}
	sp := e.policies(t)
	for _, p := range sp.Policies {
		if strings.HasPrefix(p.Name, "grant-") {
			t.Errorf("a refused GRANT was written: %+v", p)
		}
	}
	// Outside the block the session goes on.
	if _, err := alice.Exec(ctx(t), "GRANT SELECT ON other.ungoverned TO bob"); err != nil {
		t.Fatal(err)
	}
}

// 20 sessions create policies on one table at once: 20 items, none lost.
func TestAuthoringConcurrentCreatePolicy(t *testing.T) {
	bothSources(t, func(t *testing.T, e *authorEnv) {
		var wg sync.WaitGroup
		errs := make([]error, 20)
		for i := range 20 {
			conn := connect(t, e.p, "alice")
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = conn.Exec(context.Background(), fmt.Sprintf(`CREATE POLICY p%02d ON sales.orders TO "user:dave" USING (id <> %d)`, i, i))
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("session %d: %v", i, err)
			}
		}
		names := map[string]bool{}
		for _, q := range e.policies(t).Policies {
			if q.ID != 20 {
				continue
			}
			for _, it := range q.RowFilterPolicyItems {
				if i := strings.Index(it.RowFilterInfo.FilterExpr, "'pgranger-policy:"); i >= 0 {
					names[it.RowFilterInfo.FilterExpr[i:]] = true
				}
			}
			if len(q.RowFilterPolicyItems) != 21 {
				t.Errorf("%d items, want the Ranger item and 20", len(q.RowFilterPolicyItems))
			}
		}
		if len(names) != 20 {
			t.Errorf("%d distinct policies of 20", len(names))
		}
	})
}

// Every authoring statement is audited, allowed or denied, with what was sent.
func TestAuthoringAudit(t *testing.T) {
	e := startAuthoringRanger(t)
	alice := connect(t, e.p, "alice")
	bob := connect(t, e.p, "bob")
	if _, err := alice.Exec(ctx(t), "GRANT SELECT ON other.ungoverned TO bob"); err != nil {
		t.Fatal(err)
	}
	bob.Exec(ctx(t), "GRANT SELECT ON other.ungoverned TO carol")
	var recs []map[string]any
	eventually(t, 5*time.Second, func() string {
		recs = nil
		data, _ := os.ReadFile(filepath.Join(e.p.dir, "audit.jsonl"))
		for _, line := range bytes.Split(data, []byte("\n")) {
			var m map[string]any
			if json.Unmarshal(line, &m) == nil && m["action"] == "GRANT" {
				recs = append(recs, m)
			}
		}
		if len(recs) < 2 {
			return fmt.Sprintf("%d GRANT records", len(recs))
		}
		return ""
	})
	ok, denied := recs[0], recs[1]
	sent, _ := ok["sent"].([]any)
	if ok["reqUser"] != "alice" || ok["result"] != 1.0 || ok["resource"] != "other/ungoverned" || ok["access"] != "select" ||
		len(sent) != 1 || !strings.HasPrefix(sent[0].(string), "POST /service/plugins/secure/services/grant/demo_hive {") || !strings.HasSuffix(sent[0].(string), "→ 200") {
		t.Errorf("allowed record: %v", ok)
	}
	if denied["reqUser"] != "bob" || denied["result"] != 0.0 || denied["sent"] != nil ||
		denied["reason"] != `pgranger: permission denied: user "bob" may not grant select on table other.ungoverned: it has no delegated admin for select there` {
		t.Errorf("denied record: %v", denied)
	}
}

// The extended protocol, message by message: an authoring statement is
// answered by pgranger alone (no backend round trip); after statements
// still unanswered (a pipeline) it is refused with 25001 in their order,
// and the rest of the pipeline is skipped as after any error.
func TestAuthoringExtendedProtocol(t *testing.T) {
	e := startAuthoringFile(t)
	conn, err := pgconn.Connect(ctx(t), e.p.dsn("alice", "alice"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	fe := conn.Frontend()
	receive := func() []string {
		t.Helper()
		var got []string
		for {
			msg, err := fe.Receive()
			if err != nil {
				t.Fatal(err)
			}
			switch m := msg.(type) {
			case *pgproto3.ReadyForQuery:
				return append(got, "Z "+string(m.TxStatus))
			case *pgproto3.ErrorResponse:
				got = append(got, "E "+m.Code+" "+m.Message)
			case *pgproto3.CommandComplete:
				got = append(got, "C "+string(m.CommandTag))
			case *pgproto3.DataRow:
				got = append(got, "D "+string(m.Values[0]))
			default:
				got = append(got, fmt.Sprintf("%T", msg)[len("*pgproto3."):])
			}
		}
	}
	grant := "GRANT SELECT ON other.ungoverned TO bob"
	fe.SendParse(&pgproto3.Parse{Name: "g", Query: grant})
	fe.SendDescribe(&pgproto3.Describe{ObjectType: 'S', Name: "g"})
	fe.SendSync(&pgproto3.Sync{})
	fe.SendBind(&pgproto3.Bind{PreparedStatement: "g"})
	fe.SendDescribe(&pgproto3.Describe{ObjectType: 'P'})
	fe.SendExecute(&pgproto3.Execute{})
	fe.SendSync(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	equalLines(t, "prepared and run", append(receive(), receive()...), []string{
		"ParseComplete", "ParameterDescription", "NoData", "Z I",
		"BindComplete", "NoData", "C GRANT", "Z I"})

	// A name that is taken, as PostgreSQL answers it.
	fe.SendParse(&pgproto3.Parse{Name: "g", Query: grant})
	fe.SendSync(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	equalLines(t, "a taken name", receive(), []string{`E 42P05 pgranger: prepared statement "g" already exists`, "Z I"})

	// After a forwarded statement without its Sync: a pipeline.
	fe.SendParse(&pgproto3.Parse{Query: "SELECT 1"})
	fe.SendBind(&pgproto3.Bind{})
	fe.SendExecute(&pgproto3.Execute{})
	fe.SendParse(&pgproto3.Parse{Query: grant})
	fe.SendBind(&pgproto3.Bind{})
	fe.SendExecute(&pgproto3.Execute{})
	fe.SendParse(&pgproto3.Parse{Query: "SELECT 2"})
	fe.SendBind(&pgproto3.Bind{})
	fe.SendExecute(&pgproto3.Execute{})
	fe.SendSync(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	equalLines(t, "in a pipeline", receive(), []string{
		"ParseComplete", "BindComplete", "D 1", "C SELECT 1",
		"E 25001 pgranger: GRANT cannot be executed within a pipeline", "Z I"})

	// The session goes on, and the statement prepared before still runs.
	fe.SendBind(&pgproto3.Bind{PreparedStatement: "g"})
	fe.SendExecute(&pgproto3.Execute{})
	fe.SendClose(&pgproto3.Close{ObjectType: 'S', Name: "g"})
	fe.SendSync(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	equalLines(t, "again", receive(), []string{"BindComplete", "C GRANT", "CloseComplete", "Z I"})
}

// Policies as code with the built binary: export → edit → diff (exit 1)
// → sync → diff (exit 0) → sync writes nothing; the proxy enforces what
// sync wrote.
func TestPolicyAsCode(t *testing.T) {
	bothSources(t, func(t *testing.T, e *authorEnv) {
		dir := t.TempDir()
		run := func(want int, args ...string) string {
			t.Helper()
			cmd := exec.Command(binary, append(args, "--config", filepath.Join(e.p.dir, "pgranger.toml"), "--dir", dir)...)
			cmd.Env = append(os.Environ(), e.p.cmd.Env[len(os.Environ()):]...)
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != want {
				t.Fatalf("pgranger %v: exit %d, want %d\n%s%s", args, code, want, out.String(), errOut.String())
			}
			return out.String()
		}
		run(0, "policy", "export")
		n := len(authoringPolicies(t).policies())
		if out := run(0, "policy", "diff"); !strings.HasSuffix(out, fmt.Sprintf("\n0 to create, 0 to update, %d unchanged, 0 drift\n", n)) {
			t.Fatalf("diff right after export:\n%s", out)
		}
		// bob's SSN mask tightened in the directory.
		file := filepath.Join(dir, "orders-ssn.json")
		doc, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(file, bytes.Replace(doc, []byte(`"MASK_SHOW_LAST_4"`), []byte(`"MASK_NULL"`), 1), 0o644)
		out := run(1, "policy", "diff")
		if !strings.Contains(out, "update    orders ssn: dataMaskPolicyItems\n") || !strings.HasSuffix(out, fmt.Sprintf("0 to create, 1 to update, %d unchanged, 0 drift\n", n-1)) {
			t.Fatalf("diff after the edit:\n%s", out)
		}
		if out := run(0, "policy", "sync", "--dry-run"); !strings.Contains(out, "dry run: nothing was written") {
			t.Errorf("dry run:\n%s", out)
		}
		run(1, "policy", "diff")
		if out := run(0, "policy", "sync"); !strings.Contains(out, "updated   orders ssn\n") || !strings.Contains(out, "1 written to ") {
			t.Fatalf("sync:\n%s", out)
		}
		run(0, "policy", "diff")
		before := e.sourceState(t)
		if out := run(0, "policy", "sync"); !strings.Contains(out, "0 written to ") || e.sourceState(t) != before {
			t.Errorf("a second sync wrote:\n%s", out)
		}
		// The proxy enforces it once it refreshes.
		if code, body := adminGet(t, e.p, "POST", "/refresh"); code != 200 {
			t.Fatalf("refresh: %d %s", code, body)
		}
		bob := connect(t, e.p, "bob")
		wantSSN(t, bob, "NULL")
		// A directory with a lint error is not synced.
		os.WriteFile(filepath.Join(dir, "wide.json"), []byte(`{"name":"public everything","resources":{"database":{"values":["*"]},"table":{"values":["*"]},"column":{"values":["*"]}},
		  "policyItems":[{"groups":["public"],"accesses":[{"type":"select"}]}]}`), 0o644)
		run(1, "policy", "sync")
		if e.sourceState(t) != before {
			t.Error("a sync refused by lint wrote")
		}
	})
}

// The README's session: with the demo configuration, alice (compliance,
// delegated admin on hr.departments) grants the analysts; bob reads.
func TestReadmeGrant(t *testing.T) {
	p := startProxy(t, proxyOptions{})
	out, errOut, err := psqlAs(t, p, "bob", "SELECT id, name FROM hr.departments ORDER BY id")
	if err == nil || !strings.Contains(errOut, `ERROR:  pgranger: permission denied: user "bob" has no select access to column hr.departments.id`) {
		t.Fatalf("bob before the grant: %q %q %v", out, errOut, err)
	}
	out, errOut, err = psqlAs(t, p, "alice", "GRANT SELECT ON hr.departments TO GROUP analysts")
	if err != nil || out != "GRANT\n" {
		t.Fatalf("alice's GRANT: %q %q %v", out, errOut, err)
	}
	out, errOut, err = psqlAs(t, p, "bob", "SELECT id, name FROM hr.departments ORDER BY id")
	want := " id |    name     \n----+-------------\n  1 | Engineering\n  2 | Research\n(2 rows)\n\n"
	if err != nil || out != want {
		t.Fatalf("bob after the grant:\n%s%s%v", out, errOut, err)
	}
	// The example file in the repository is not the one written.
	if data, _ := os.ReadFile(filepath.Join(repoRoot, "examples/policies/hive.json")); strings.Contains(string(data), "grant-") {
		t.Error("the GRANT wrote examples/policies/hive.json")
	}
}
