package sqlrewrite

import (
	"strings"

	"github.com/pgranger/pgranger/audit"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/sqlstate"
)

// What the audit records of a text say of its decisions is decided here,
// with the decisions and under the one policy snapshot the rewrite used:
// whether the bundle's audit settings (audit mode, exclusions, filters,
// the deciding policies' isAuditEnabled) audit each statement and
// relation, and the policy version. The caller adds what only the
// execution tells (rows, duration, failure) and writes the records
// (audit.Logger.Ran, Refused); a reload between the decision and the
// record changes neither.

// decideAudit fills res.Audit under env.Policy, at env.Now. Without an
// engine (policies unavailable) everything is audited: nothing can be
// excluded.
func (res *Result) decideAudit(env *Env, subj *policy.Subject) {
	eng := env.Policy.Engine
	a := &res.Audit
	a.Fingerprint = res.Fingerprint
	a.PolicyGeneration = env.Policy.Generation
	if v, ok := env.Policy.Version(); ok {
		a.PolicyVersion = &v
	}
	audited := func(q *policy.Request) bool {
		q.Subject, q.At, q.Want = subj, env.Now, policy.WantRecordAudit
		return eng == nil || eng.Evaluate(q).Audited
	}
	if res.Err != nil {
		d := res.denialRecord()
		q := policy.Request{Access: d.Access, Action: d.Action, Decided: policy.Decided{Denied: true}}
		if den := res.Err.Denied; den != nil {
			q.Hive = policy.Resource{Database: den.Database, Table: den.Table}
			if den.Column != "" {
				q.Decided.Columns = []string{den.Column}
			}
			q.Decided.PolicyIDs = [][]int64{{den.PolicyID}}
		}
		d.Audited = audited(&q)
		a.Denied = d
		return
	}
	a.Statements = make([]audit.Statement, len(res.Statements))
	for i := range res.Statements {
		st := &res.Statements[i]
		out := &a.Statements[i]
		out.Action = string(st.Kind)
		if len(st.Resources) == 0 {
			out.Audited = audited(&policy.Request{Action: out.Action})
			continue
		}
		out.Uses = make([]audit.Use, len(st.Resources))
		for j := range st.Resources {
			u := &st.Resources[j]
			use := &out.Uses[j]
			use.Access = u.Access
			use.Resource, use.ResType = u.Database+"/"+u.Table, "@table"
			if len(u.Columns) > 0 {
				use.Resource += "/" + strings.Join(u.Columns, ",")
				use.ResType = "@column"
			}
			if len(u.PolicyIDs) > 0 {
				use.Policy = u.PolicyIDs[0]
			}
			use.MaskPolicies, use.FilterPolicies = u.MaskPolicyIDs, u.FilterPolicyIDs
			use.Audited = audited(&policy.Request{Hive: policy.Resource{Database: u.Database, Table: u.Table}, Access: u.Access, Action: out.Action,
				Decided: policy.Decided{Columns: u.Columns, PolicyIDs: [][]int64{u.PolicyIDs, u.MaskPolicyIDs, u.FilterPolicyIDs}}})
		}
	}
}

// decideAuditOrDeny is decideAudit, failing closed: a text whose audit
// cannot be decided is denied, and its denial recorded.
func (res *Result) decideAuditOrDeny(env *Env, sess *Session) {
	defer func() {
		if p := recover(); p != nil {
			*res = Result{Err: errorf(sqlstate.InsufficientPrivilege, "internal error while deciding the statement's audit (%v): denied for user %q", p, sess.Subject.User),
				Fingerprint: res.Fingerprint}
			res.Audit = audit.Decision{Fingerprint: res.Fingerprint, PolicyGeneration: env.Policy.Generation,
				Denied: &audit.Denied{Audited: true, Action: "DENIED", Reason: res.Err.Message}}
		}
	}()
	res.decideAudit(env, sess.Subject)
}

// denialRecord is what the record of res's refusal names: the denied
// statement (the last one analysed) and, when Ranger decided, the
// resource, access and policy of the denial.
func (res *Result) denialRecord() *audit.Denied {
	d := &audit.Denied{Action: "DENIED", Reason: res.Err.AuditReason()}
	if n := len(res.Statements); n > 0 {
		st := &res.Statements[n-1]
		d.Action = string(st.Kind)
		if len(st.Resources) > 0 {
			u := st.Resources[len(st.Resources)-1]
			d.Resource, d.Access, d.ResType = u.Database+"/"+u.Table, u.Access, "@table"
		}
	}
	if den := res.Err.Denied; den != nil {
		d.Resource, d.ResType = den.auditResource()
		d.Access, d.Policy = den.Access, den.PolicyID
	}
	return d
}

// Refusal is the Result of a refusal made before any text was analysed
// (a message that carries no statement, such as a fast-path
// FunctionCall), its audit decided under env as any other's.
func Refusal(env *Env, sess *Session, kind StatementKind, err *Error) *Result {
	res := &Result{Err: err, Statements: []StatementInfo{{Kind: kind}}}
	res.decideAuditOrDeny(env, sess)
	return res
}

// auditResource is the audit record's resource and resource type of a
// denial, in Ranger's notation: database/table[/column] or database/udf.
func (d *Denial) auditResource() (resource, resType string) {
	switch {
	case d.UDF != "":
		return d.Database + "/" + d.UDF, "@udf"
	case d.Column != "":
		return d.Database + "/" + d.Table + "/" + d.Column, "@column"
	}
	return d.Database + "/" + d.Table, "@table"
}

// AuditReason is the refusal's message as its audit record gives it:
// the message, except where it may quote the statement text (and so a
// literal) — the parser's errors and limits, and texts that could not be
// analysed — which are named by SQLSTATE.
func (e *Error) AuditReason() string {
	switch {
	case e.Code == sqlstate.SyntaxError:
		return "syntax error (SQLSTATE 42601)"
	case e.Code == sqlstate.StatementTooComplex || e.Code == sqlstate.ProgramLimitExceeded:
		return "statement too large or too complex (SQLSTATE " + e.Code + ")"
	case e.Unanalysable:
		return "the statement could not be analysed (SQLSTATE " + e.Code + ")"
	}
	return e.Message
}
