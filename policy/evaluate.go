package policy

import (
	"sort"
	"time"
)

// Evaluate is the engine's one question, as Ranger's
// RangerPolicyEngine.evaluatePolicies: a Request names the subject, the
// resource, the access and its context, and what to evaluate (Want); the
// Result holds the access decision, the column's mask, the table's row
// filters, the audit decision, the resource's tags and the delegated-admin
// decision that were asked for. Every part is evaluated on the bundle the
// engine was built from and nothing else.

// Want says what Evaluate evaluates; the parts not asked for stay zero.
type Want uint8

const (
	// WantAccess: Result.Access, for Request.Access ("" or "_any": any
	// access at or below the resource).
	WantAccess Want = 1 << iota
	// WantMask: Result.Mask, the mask of the requested column (a select).
	WantMask
	// WantRowFilter: Result.RowFilter, the row filters of the requested
	// table (a select; the column is ignored).
	WantRowFilter
	// WantAudit: Result.Audited, Ranger's isAudited for the access
	// request (audit mode, exclusions, the audit-enabled policies that
	// apply, then the audit filters, which see Request.Action), for the
	// decision WantAccess gives when it is asked too, else for the result
	// in Request.Decided.
	WantAudit
	// WantRecordAudit: Result.Audited for the proxy's record of the
	// access in Request.Decided, decided before (the audit mode,
	// exclusions and filters, and the deciding policies' isAuditEnabled;
	// with columns, each column is a request of its own and one audited
	// column is enough).
	WantRecordAudit
	// WantTags: Result.Tags, the tags that apply to the resource for a
	// select (stored order; a tag attached to several matching resources
	// once per match type). nil without ServiceTags.
	WantTags
	// WantAdmin: Result.Admin, whether the subject may administer every
	// one of Request.Accesses on the resource (Ranger's delegated admin).
	WantAdmin
)

// Request is one request to the engine (Ranger's RangerAccessRequest).
// The resource is Hive's database, table and column (Hive), or, for
// callers that are not hive-shaped (the conformance runner, url or
// hiveservice checks), the service-def's own resource names (Resource,
// when not nil).
type Request struct {
	Subject  *Subject
	Want     Want
	Hive     Resource            // used when Resource is nil
	Resource map[string][]string // resource name -> value; several values match if any matches
	Owner    string              // with Resource: the resource's owner, for {OWNER}
	Access   string              // "" or "_any" = any access
	At       time.Time           // zero = now
	Tags     []RequestTag        // nil: look tags up in the bundle's ServiceTags
	Action   string              // what the client does (Hive's operation), for audit filters
	// SelfOrDescendants is Ranger's ResourceMatchingScope
	// SELF_OR_DESCENDANTS: policies and tags on resources below the
	// requested one apply, as they do for `_any` (with Resource).
	SelfOrDescendants bool
	// DescendantDeny is Ranger's isDescendantDenyIgnored false: a deny of
	// a policy on a resource below the requested one denies the request
	// (by default, as in Ranger, such denies are ignored; with Resource).
	DescendantDeny bool
	Context        *RequestContext
	// Accesses are the accesses WantAdmin asks about.
	Accesses []string
	// Decided is the access as decided before, for WantRecordAudit and
	// for WantAudit without WantAccess.
	Decided Decided

	// result is where Evaluate puts its answer: in the caller's Request,
	// so that an answer costs no copy of a Result (nor an allocation).
	result Result
}

// Decided is an access already decided, for its audit record: the
// columns read (each a request of its own for the audit filters), the
// result, and the access, mask and row-filter policies that decided it.
type Decided struct {
	Columns   []string
	Denied    bool
	PolicyIDs [][]int64
}

// Result is what Evaluate found for the parts its Request wanted. It
// lives in the Request: a Request asked again overwrites the parts it
// wants and leaves the others as they were.
type Result struct {
	Access    Decision
	Mask      Mask
	RowFilter RowFilter
	Audited   bool
	Tags      []Tag // the caller's to keep
	Admin     AdminDecision
}

// Evaluate evaluates req for the parts req.Want names, and returns its
// Result (which is req's).
func (e *Engine) Evaluate(req *Request) *Result {
	res := &req.result
	if req.Want&WantAccess != 0 {
		res.Access = e.evalAccess(e.prepareFor(req, req.Access, false, true))
	}
	if req.Want&WantMask != 0 {
		res.Mask = e.evalMask(e.prepareFor(req, "select", false, true))
	}
	if req.Want&WantRowFilter != 0 {
		res.RowFilter = e.evalRowFilter(e.prepareFor(req, "select", true, true))
	}
	if req.Want&WantAudit != 0 {
		allowed := res.Access.Allowed
		if req.Want&WantAccess == 0 {
			allowed = !req.Decided.Denied
		}
		// Ranger's audit policies and filters read the request, not its
		// context.
		res.Audited = e.auditOf(e.prepareFor(req, req.Access, false, false), allowed, req.Action)
	}
	if req.Want&WantRecordAudit != 0 {
		res.Audited = e.auditedAccess(req)
	}
	if req.Want&WantTags != 0 {
		res.Tags = e.tagsOf(req)
	}
	if req.Want&WantAdmin != 0 {
		res.Admin = e.delegatedAdmin(req.Subject, req.Hive, req.Accesses, req.At)
	}
	return res
}

// tagsOf is WantTags.
func (e *Engine) tagsOf(req *Request) []Tag {
	if e.tags == nil {
		return nil
	}
	rq := e.prepareFor(req, "select", false, false)
	tags := append([]*reqTag(nil), rq.tags...)
	sort.SliceStable(tags, func(i, j int) bool { return tags[i].order < tags[j].order })
	out := make([]Tag, 0, len(tags))
	for _, t := range tags {
		out = append(out, *t.export())
	}
	return out
}

// prepareFor is the evaluation request of req for access; table: a
// table-level request (the column dropped); withCtx: with req.Context.
func (e *Engine) prepareFor(req *Request, access string, table, withCtx bool) *evalReq {
	var rq *evalReq
	if req.Resource != nil {
		rq = e.prepareRequest(req.Subject, access, req)
	} else {
		r := req.Hive
		if table {
			r.Column = ""
		}
		rq = e.prepare(req.Subject, access, req.At, e.hiveResource(r), req.Tags, req.Tags != nil)
	}
	if withCtx {
		rq.withContext(req.Context)
	}
	return rq
}
