package sqlrewrite

import (
	"context"
	"testing"
	"time"

	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/sqlstate"
)

func TestAuditReasonNeverQuotesTheStatement(t *testing.T) {
	for _, c := range []struct {
		err  Error
		want string
	}{
		{Error{Code: "42601", Message: `syntax error at or near "'s3cret'"`}, "syntax error (SQLSTATE 42601)"},
		{Error{Code: "54001", Message: "statement is too complex to parse: x"}, "statement too large or too complex (SQLSTATE 54001)"},
		{*unanalysable(sqlstate.FeatureNotSupported, "cannot render the rewritten statement as SQL that parses again (near 'x'); rewrite the statement"),
			"the statement could not be analysed (SQLSTATE 0A000)"},
		{Error{Code: "42501", Message: `pgranger: permission denied: user "bob" has no select access to column hr.employees.salary`},
			`pgranger: permission denied: user "bob" has no select access to column hr.employees.salary`},
	} {
		if got := c.err.AuditReason(); got != c.want {
			t.Errorf("%s: %q, want %q", c.err.Message, got, c.want)
		}
	}
}

// The audit decision travels with the rewrite: the policy generation and
// version it was decided under, and a record per relation and statement.
func TestRewriteCarriesItsAuditDecision(t *testing.T) {
	eng := testEngine(t)
	env := &Env{Policy: policy.Snapshot{Engine: eng, Generation: 7}, Catalog: testCatalog(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	rw := New(Options{})
	res := rw.Rewrite(context.Background(), env, sessionFor("bob"), "SELECT id FROM sales.orders; SET search_path = public")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	a := res.Audit
	if a.PolicyGeneration != 7 || a.PolicyVersion == nil || *a.PolicyVersion != eng.PolicyVersion() || a.Fingerprint != res.Fingerprint {
		t.Errorf("audit decision %+v", a)
	}
	if len(a.Statements) != 2 || a.Statements[0].Action != "SELECT" || len(a.Statements[0].Uses) != 1 ||
		a.Statements[0].Uses[0].Resource != "sales/orders/id" || !a.Statements[0].Uses[0].Audited ||
		a.Statements[1].Action != "SET" || !a.Statements[1].Audited || a.Denied != nil {
		t.Errorf("audit statements %+v", a.Statements)
	}
	den := rw.Rewrite(context.Background(), env, sessionFor("carol"), "SELECT salary FROM hr.employees")
	if den.Err == nil || den.Audit.Denied == nil || !den.Audit.Denied.Audited || den.Audit.Denied.Action != "SELECT" ||
		den.Audit.Denied.Reason != den.Err.Message || den.Audit.PolicyGeneration != 7 {
		t.Errorf("denial's audit %+v (err %v)", den.Audit.Denied, den.Err)
	}
}

func sessionFor(user string) *Session {
	subj := testSubjects[user]
	return &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo", SearchPath: []string{"$user", "public"}, DefaultSearchPath: []string{"$user", "public"}}
}
