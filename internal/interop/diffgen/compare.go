package diffgen

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/pgranger/pgranger/internal/interop"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/rangerexpr"
)

// Answer is one engine's answer to a Request in Ranger's terms: policy id
// -1 when no policy decided; MaskType MASK_NONE when a MASK_NONE item
// matched; ${{…}} expanded to text as Ranger pastes it.
type Answer struct {
	Allowed    bool   `json:"allowed,omitempty"`
	Audited    bool   `json:"audited,omitempty"`
	PolicyID   int64  `json:"policyId"`
	MaskType   string `json:"maskType,omitempty"`
	ValueExpr  string `json:"valueExpr,omitempty"`
	FilterExpr string `json:"filterExpr,omitempty"`
	// Err: pgranger could not expand an expression (the SQL layer would
	// deny the table), or the oracle failed on the request.
	Err string `json:"error,omitempty"`
}

// subject and request are q in pgranger's terms.
func (q *Request) subject() *policy.Subject {
	return &policy.Subject{User: q.User, Groups: q.Groups}
}

func (q *Request) resource() map[string][]string {
	res := map[string][]string{"database": {q.Database}}
	if q.Table != "" {
		res["table"] = []string{q.Table}
	}
	if q.Column != "" {
		res["column"] = []string{q.Column}
	}
	return res
}

func (q *Request) policyRequest() policy.Request {
	return policy.Request{Resource: q.resource(), Owner: q.Owner, Access: q.Access, At: q.At, SelfOrDescendants: q.SelfOrDescendants}
}

// OracleItem is q as one evaluation of the Ranger oracle's batch.
func (q *Request) OracleItem() interop.BatchItem {
	r := interop.Request{Resource: q.resource(), Owner: q.Owner, User: q.User, Groups: q.Groups, AccessTime: q.At}
	if q.Kind == "access" {
		r.AccessType = q.Access
		if q.SelfOrDescendants {
			r.ResourceMatchingScope = "SELF_OR_DESCENDANTS"
		}
	}
	return interop.BatchItem{Op: q.Kind, Request: r}
}

// OracleAnswer is the oracle's answer to q in the terms of Answer.
func OracleAnswer(q *Request, a interop.BatchAnswer) Answer {
	if a.Err != "" {
		return Answer{PolicyID: -1, Err: a.Err}
	}
	switch q.Kind {
	case "access":
		return Answer{Allowed: a.Access.Allowed, Audited: a.Access.Audited, PolicyID: a.Access.PolicyID}
	case "mask":
		return Answer{MaskType: a.Mask.MaskType, ValueExpr: a.Mask.MaskedValue, PolicyID: a.Mask.PolicyID}
	}
	return Answer{FilterExpr: a.RowFilter.FilterExpr, PolicyID: a.RowFilter.PolicyID}
}

// PgrangerAnswer asks pgranger's engine what q asks.
func PgrangerAnswer(eng *policy.Engine, q *Request) Answer {
	req := q.policyRequest()
	req.Subject = q.subject()
	switch q.Kind {
	case "access":
		req.Want = policy.WantAccess | policy.WantAudit
		res := eng.Evaluate(&req)
		return Answer{Allowed: res.Access.Allowed, Audited: res.Audited, PolicyID: rangerID(res.Access.PolicyID)}
	case "mask":
		req.Want = policy.WantMask
		m := eng.Evaluate(&req).Mask
		a := Answer{MaskType: m.Type, PolicyID: rangerID(m.PolicyID)}
		if m.Type == "" && m.PolicyID != 0 {
			// pgranger reports a matched MASK_NONE as "unmasked" with
			// its policy; Ranger's result names the type.
			a.MaskType = ranger.MaskTypeNone
		}
		a.ValueExpr, a.Err = expand(eng, q, m.ValueExpr, m.CurrentTag)
		return a
	}
	req.Want = policy.WantRowFilter
	rf := eng.Evaluate(&req).RowFilter
	a := Answer{PolicyID: -1}
	if len(rf.Exprs) > 0 {
		a.PolicyID = rf.PolicyIDs[0]
		var parts []string
		for i, e := range rf.Exprs {
			s, err := expand(eng, q, e, rf.Tags[i])
			if err != "" {
				a.Err = err
			}
			parts = append(parts, s)
		}
		a.FilterExpr = strings.Join(parts, " AND ")
	}
	return a
}

func rangerID(id int64) int64 {
	if id == 0 {
		return -1
	}
	return id
}

var exprRE = regexp.MustCompile(`\$\{\{(.*?)\}\}`)

// expand replaces each ${{…}} of s by its value as text, evaluated by
// pgranger's expression evaluator with what the SQL layer gives it (the
// engine's user and group attributes, roles, the resource's tags, the
// current tag): Ranger's engine returns the expanded text, pgranger's
// returns the expression for its SQL layer to expand (a named
// difference), so the comparison is of the text either produces. An
// expression pgranger cannot evaluate (a missing attribute, which makes
// the SQL layer deny the table) is returned as err.
func expand(eng *policy.Engine, q *Request, s string, cur *policy.Tag) (string, string) {
	if !strings.Contains(s, "${{") {
		return s, ""
	}
	subj := q.subject()
	env := &rangerexpr.Env{User: q.User, Attrs: eng.UserAttributes(subj), GroupAttrs: eng.GroupAttributes(subj), Roles: eng.RolesOf(subj)}
	env.Groups = append([]string(nil), q.Groups...)
	sort.Strings(env.Groups)
	res := policy.Resource{Database: q.Database, Table: q.Table, Column: q.Column, Owner: q.Owner}
	env.Resource = map[string]string{"database": q.Database, "table": q.Table}
	if q.Column != "" {
		env.Resource["column"] = q.Column
	}
	for _, t := range eng.Evaluate(&policy.Request{Subject: subj, Hive: res, At: q.At, Want: policy.WantTags}).Tags {
		env.Tags = append(env.Tags, rangerexpr.Tag{Type: t.Type, Attributes: t.Attributes, MatchType: t.MatchType})
	}
	if cur != nil {
		env.Tag = &rangerexpr.Tag{Type: cur.Type, Attributes: cur.Attributes, MatchType: cur.MatchType}
	}
	var errs []string
	out := exprRE.ReplaceAllStringFunc(s, func(m string) string {
		v, err := rangerexpr.Eval(exprRE.FindStringSubmatch(m)[1], env)
		if err == nil {
			var text string
			if text, err = v.Text(); err == nil {
				return text
			}
		}
		errs = append(errs, err.Error())
		return ""
	})
	return out, strings.Join(errs, "; ")
}

// Diff lists the fields on which two answers to q differ, "" when none:
// access compares allowed, audited and the deciding policy; masks the
// type, the policy and the value expression; row filters the expression
// and the policy.
func Diff(q *Request, pg, rg Answer) string {
	var d []string
	add := func(field string, p, r any) {
		if fmt.Sprint(p) != fmt.Sprint(r) {
			d = append(d, fmt.Sprintf("%s pgranger=%q ranger=%q", field, fmt.Sprint(p), fmt.Sprint(r)))
		}
	}
	add("error", pg.Err, rg.Err)
	switch q.Kind {
	case "access":
		add("allowed", pg.Allowed, rg.Allowed)
		add("audited", pg.Audited, rg.Audited)
		add("policyId", pg.PolicyID, rg.PolicyID)
	case "mask":
		add("maskType", pg.MaskType, rg.MaskType)
		add("policyId", pg.PolicyID, rg.PolicyID)
		add("valueExpr", pg.ValueExpr, rg.ValueExpr)
	default:
		add("filterExpr", pg.FilterExpr, rg.FilterExpr)
		add("policyId", pg.PolicyID, rg.PolicyID)
	}
	return strings.Join(d, "; ")
}
