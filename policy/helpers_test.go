package policy

import (
	"testing"
	"time"

	"github.com/pgranger/pgranger/ranger"
)

var t0 = time.Date(2025, 6, 2, 12, 0, 0, 0, time.UTC) // a Monday

// testBundle parses a ServicePolicies document; with no serviceDef the
// engine uses the stock hive one.
func testBundle(t testing.TB, doc string) *ranger.Bundle {
	t.Helper()
	sp, err := ranger.ParseServicePolicies([]byte(doc))
	if err != nil {
		t.Fatalf("bad test document: %v", err)
	}
	return &ranger.Bundle{Policies: sp}
}

func testEngine(t testing.TB, doc string) *Engine {
	t.Helper()
	e, err := NewEngine(testBundle(t, doc), Options{})
	if err != nil {
		t.Fatalf("NewEngine: %v", err)
	}
	return e
}

// hiveDefWithConditions is the stock hive service-def plus condition types.
func hiveDefWithConditions() *ranger.RangerServiceDef {
	d := StockHiveServiceDef()
	d.PolicyConditions = []ranger.RangerPolicyConditionDef{
		{Name: "expression", Evaluator: "org.apache.ranger.plugin.conditionevaluator.RangerScriptConditionEvaluator"},
		{Name: "ip-range", Evaluator: "org.apache.ranger.plugin.conditionevaluator.RangerIpMatcher"},
		{Name: "not-expired", Evaluator: "org.apache.ranger.plugin.conditionevaluator.RangerScriptTemplateConditionEvaluator",
			EvaluatorOptions: ranger.StringMap{"scriptTemplate": "ctx.isAccessedBefore('expiry')"}},
		{Name: "any-tag", Evaluator: "org.apache.ranger.plugin.conditionevaluator.RangerAnyOfExpectedTagsPresentConditionEvaluator"},
	}
	return d
}

func subj(user string, groups ...string) *Subject { return &Subject{User: user, Groups: groups} }

func res(db, table, column string) Resource {
	return Resource{Database: db, Table: table, Column: column}
}

type accessCase struct {
	name    string
	s       *Subject
	r       Resource
	access  string
	at      time.Time
	allowed bool
	id      int64
}

func runAccess(t *testing.T, e *Engine, cases []accessCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			at := tc.at
			if at.IsZero() {
				at = t0
			}
			d := e.Access(tc.s, tc.r, tc.access, at)
			if d.Allowed != tc.allowed || d.PolicyID != tc.id {
				t.Errorf("got allowed=%v id=%d (%s), want allowed=%v id=%d", d.Allowed, d.PolicyID, d.Reason, tc.allowed, tc.id)
			}
		})
	}
}

type rangerPR = ranger.RangerPolicyResource

func toRanger(m map[string]rangerPR) map[string]ranger.RangerPolicyResource { return m }

// The specialised entry points the engine once had, as the tests ask
// them: each is Evaluate with one part.

func (e *Engine) AccessRequest(s *Subject, req Request) Decision {
	req.Subject, req.Want = s, WantAccess
	return e.Evaluate(&req).Access
}

func (e *Engine) AuditRequest(s *Subject, req Request, d Decision) bool {
	req.Subject, req.Want, req.Decided = s, WantAudit, Decided{Denied: !d.Allowed}
	return e.Evaluate(&req).Audited
}

func (e *Engine) AccessWithContext(s *Subject, r Resource, access string, at time.Time, ctx *RequestContext) Decision {
	return e.Evaluate(&Request{Subject: s, Hive: r, Access: access, At: at, Context: ctx, Want: WantAccess}).Access
}

func (e *Engine) DelegatedAdmin(s *Subject, r Resource, accesses []string, at time.Time) AdminDecision {
	return e.Evaluate(&Request{Subject: s, Hive: r, Accesses: accesses, At: at, Want: WantAdmin}).Admin
}

func (e *Engine) AuditedAccess(q *auditQuery) bool {
	return e.Evaluate(&Request{Subject: q.Subject, Hive: q.Resource, Access: q.Access, Action: q.Action, At: q.At, Want: WantRecordAudit,
		Decided: Decided{Columns: q.Columns, Denied: q.Denied, PolicyIDs: q.PolicyIDs}}).Audited
}

// auditQuery is one decided access as the proxy records it (the tests' shorthand for a WantRecordAudit Request): a relation
// (and the columns it read), the access, the statement kind as Ranger's
// action, the decision and the policies that made it.
type auditQuery struct {
	Subject   *Subject
	Resource  Resource // the relation; Column is ignored
	Columns   []string // the columns read, each a request of its own for the audit filters
	Access    string
	Action    string
	Denied    bool
	PolicyIDs [][]int64 // access, mask and row-filter policy ids
	At        time.Time // zero = now
}
