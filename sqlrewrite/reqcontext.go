package sqlrewrite

import (
	"github.com/pgranger/pgranger/policy"
)

// The request context of policy conditions (Ranger's
// RangerAccessRequest.getClientIPAddress and getContext()): the client's
// address and, for a statement, REQUESTED_RESOURCES — every table and
// column it reads. Decisions are made without it (Request.Context nil) unless
// the bundle has conditions that read it, so the common case pays nothing.

// requestContext is the context of the session: the client's address,
// no requested resources (they are known once the statement is walked).
func (r *stmtRewriter) requestContext() *policy.RequestContext {
	eng := r.env.Policy.Engine
	if eng == nil || !eng.ConditionsReadRequest() {
		return nil
	}
	if r.reqCtx == nil {
		r.reqCtx = &policy.RequestContext{ClientIP: r.sess.ClientAddr, Attributes: map[string]string{}}
	}
	return r.reqCtx
}

// statementContext adds the statement's requested resources, as Hive's
// buildRequestContextWithAllAccessedResources lists them: a column
// resource per column a reference reads, the table when it reads none.
// References inside a view definition are not the user's request (Hive
// requests the view), and the relations a statement writes are checked
// as they are.
func (r *stmtRewriter) statementContext() *policy.RequestContext {
	base := r.requestContext()
	if base == nil || !r.env.Policy.Engine.ConditionsReadRequestedResources() {
		return base
	}
	ctx := *base
	ctx.RequestedResources = []policy.Resource{}
	seen := map[policy.Resource]bool{}
	add := func(res policy.Resource) {
		res.Owner = "" // Ranger's resource equality ignores the owner
		if !seen[res] {
			seen[res] = true
			ctx.RequestedResources = append(ctx.RequestedResources, res)
		}
	}
	for _, ref := range r.refs {
		if ref.dml != nil || ref.trusted || ref.pol == nil {
			continue
		}
		cols := ref.readColumns()
		if len(cols) == 0 {
			add(ref.pol.resource)
			continue
		}
		for _, i := range cols {
			cr := ref.pol.resource
			cr.Column = ref.rel.Columns[i].Name
			add(cr)
		}
	}
	return &ctx
}

// access decides one request in the session's context.
func (r *stmtRewriter) access(res policy.Resource, access string, ctx *policy.RequestContext) policy.Decision {
	return r.env.Policy.Engine.Evaluate(&policy.Request{Subject: r.sess.Subject, Hive: res, Access: access, At: r.env.Now, Context: ctx,
		Want: policy.WantAccess}).Access
}
