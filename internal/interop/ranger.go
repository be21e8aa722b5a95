package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/pgranger/pgranger/ranger"
)

// Ranger is a running Ranger policy-engine oracle.
type Ranger struct {
	p *proc
	// Version is the Ranger release on the oracle's class path, JSEngine
	// the JavaScript engine Ranger found for ${{…}} and script conditions.
	Version, JSEngine, Java string
	// Started is how long the JVM took to be ready.
	Started time.Duration
}

// StartRanger builds (when needed) and starts the Ranger oracle for a
// release ("" = RangerVersion()). It fails when Ranger finds no JavaScript
// engine: expressions would then not evaluate as in a real deployment.
func StartRanger(ctx context.Context, version string, opts Options) (*Ranger, error) {
	a, err := RangerArtifact(ctx, version)
	if err != nil {
		return nil, err
	}
	p, err := startProc(ctx, a, opts)
	if err != nil {
		return nil, err
	}
	var hello struct {
		RangerVersion string  `json:"rangerVersion"`
		JSEngine      *string `json:"jsEngine"`
		Java          string  `json:"java"`
	}
	if err := json.Unmarshal(p.hello, &hello); err != nil {
		p.close()
		return nil, fmt.Errorf("interop: ranger oracle's ready line: %w", err)
	}
	if hello.JSEngine == nil {
		p.close()
		return nil, fmt.Errorf("interop: Ranger %s found no JavaScript engine on the oracle's class path (GraalJS expected); stderr:\n%s", hello.RangerVersion, p.stderr.String())
	}
	return &Ranger{p: p, Version: hello.RangerVersion, JSEngine: *hello.JSEngine, Java: hello.Java, Started: p.started}, nil
}

// Close stops the JVM.
func (r *Ranger) Close() error { return r.p.close() }

// LoadResult says what the oracle built.
type LoadResult struct {
	PolicyVersion int64 `json:"policyVersion"`
	// TagEnricherAdded: the tag service-def had no RangerTagEnricher, so
	// the oracle added one for the bundle's ServiceTags to apply (Ranger
	// Admin's tag service-def has one).
	TagEnricherAdded bool `json:"tagEnricherAdded"`
	// TagEnricher and UserStoreEnricher: whether the plugin has them, so
	// whether ServiceTags and the user store are used at all.
	TagEnricher       bool `json:"tagEnricher"`
	UserStoreEnricher bool `json:"userStoreEnricher"`
}

// Load replaces the oracle's plugin with one built from the bundle. config
// holds extra plugin configuration properties
// (ranger.plugin.hive.use.x-forwarded-for.ipaddress, …); audit is off.
func (r *Ranger) Load(ctx context.Context, b *ranger.Bundle, config map[string]string) (LoadResult, error) {
	if b == nil || b.Policies == nil {
		return LoadResult{}, fmt.Errorf("interop: Load needs a bundle with ServicePolicies")
	}
	req := map[string]any{"op": "load"}
	for key, doc := range map[string]any{"servicePolicies": b.Policies, "serviceTags": b.Tags, "roles": b.Roles, "userStore": b.UserStore} {
		if reflectNil(doc) {
			continue
		}
		raw, err := RangerDocument(doc)
		if err != nil {
			return LoadResult{}, fmt.Errorf("interop: encode %s: %w", key, err)
		}
		req[key] = raw
	}
	if len(config) > 0 {
		req["config"] = config
	}
	var res LoadResult
	err := r.p.call(ctx, req, &res)
	return res, err
}

// SetPolicies hands a ServicePolicies document to the loaded plugin's
// setPolicies: a document with policyDeltas updates the engine by them, as
// a plugin that asked for deltas does.
func (r *Ranger) SetPolicies(ctx context.Context, sp *ranger.ServicePolicies) error {
	raw, err := RangerDocument(sp)
	if err != nil {
		return fmt.Errorf("interop: encode servicePolicies: %w", err)
	}
	var res LoadResult
	return r.p.call(ctx, map[string]any{"op": "setPolicies", "servicePolicies": raw}, &res)
}

// reflectNil reports whether a document is a nil pointer.
func reflectNil(doc any) bool {
	switch d := doc.(type) {
	case *ranger.ServicePolicies:
		return d == nil
	case *ranger.ServiceTags:
		return d == nil
	case *ranger.RangerRoles:
		return d == nil
	case *ranger.RangerUserStore:
		return d == nil
	}
	return doc == nil
}

// Request is one request to the engine, in Ranger's terms
// (RangerAccessRequestImpl). Empty fields are left to Ranger's defaults.
type Request struct {
	// Resource maps resource names of the service-def (database, table,
	// column, udf, url, …) to a value; several values make a multi-valued
	// element.
	Resource map[string][]string
	Owner    string
	// AccessType: select, update, …, "_any"; for Mask and RowFilter ""
	// means select.
	AccessType string
	User       string
	Groups     []string
	// Roles: nil lets Ranger resolve the user's roles from the bundle's
	// RangerRoles, as a plugin does.
	Roles              []string
	AccessTime         time.Time // zero: now
	ClientIPAddress    string
	RemoteIPAddress    string
	ForwardedAddresses []string
	Action             string
	RequestData        string
	ClientType         string
	ClusterName        string
	ClusterType        string
	// ResourceMatchingScope: "" (SELF) or "SELF_OR_DESCENDANTS".
	ResourceMatchingScope   string
	IsDescendantDenyIgnored *bool
	// Tags of the resource, as Ranger's TAGS request context; nil leaves
	// tags to the bundle's ServiceTags.
	Tags []Tag
	// Context holds further request-context entries as JSON values
	// (condition attributes, ALLACCESSTYPES, ISANYACCESS,
	// REQUESTED_RESOURCES …), built as Ranger's test runner builds them.
	Context map[string]json.RawMessage
	// UserAttributes and GroupAttributes become a request-scoped user
	// store (Ranger's test files' userAttributes).
	UserAttributes  map[string]map[string]string
	GroupAttributes map[string]map[string]string
}

// Tag is one tag of the requested resource (RangerTagForEval).
type Tag struct {
	Type       string            `json:"type"`
	Attributes map[string]string `json:"attributes,omitempty"`
	// MatchType: SELF (default), SELF_AND_ALL_DESCENDANTS, ANCESTOR,
	// DESCENDANT.
	MatchType string `json:"matchType,omitempty"`
}

func (q *Request) wire(op string) map[string]any {
	m := map[string]any{"op": op, "user": q.User}
	res := map[string]any{}
	for k, vs := range q.Resource {
		if len(vs) == 1 {
			res[k] = vs[0]
		} else {
			res[k] = vs
		}
	}
	m["resource"] = res
	set := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	set("owner", q.Owner)
	set("accessType", q.AccessType)
	set("clientIPAddress", q.ClientIPAddress)
	set("remoteIPAddress", q.RemoteIPAddress)
	set("action", q.Action)
	set("requestData", q.RequestData)
	set("clientType", q.ClientType)
	set("clusterName", q.ClusterName)
	set("clusterType", q.ClusterType)
	set("resourceMatchingScope", q.ResourceMatchingScope)
	if q.Groups != nil {
		m["groups"] = q.Groups
	}
	if q.Roles != nil {
		m["roles"] = q.Roles
	}
	if q.ForwardedAddresses != nil {
		m["forwardedAddresses"] = q.ForwardedAddresses
	}
	if !q.AccessTime.IsZero() {
		m["accessTime"] = q.AccessTime.UnixMilli()
	}
	if q.IsDescendantDenyIgnored != nil {
		m["isDescendantDenyIgnored"] = *q.IsDescendantDenyIgnored
	}
	if q.Tags != nil {
		m["tags"] = q.Tags
	}
	if len(q.Context) > 0 {
		m["context"] = q.Context
	}
	if len(q.UserAttributes) > 0 {
		m["userAttributes"] = q.UserAttributes
	}
	if len(q.GroupAttributes) > 0 {
		m["groupAttributes"] = q.GroupAttributes
	}
	return m
}

// AccessResult is RangerAccessResult of an access request.
type AccessResult struct {
	Allowed    bool   `json:"allowed"`
	Determined bool   `json:"determined"`
	Audited    bool   `json:"audited"`
	PolicyID   int64  `json:"policyId"` // -1: no policy decided
	Priority   int    `json:"policyPriority"`
	Reason     string `json:"reason"`
}

// MaskResult is RangerAccessResult of a data-mask request. Absent values
// (Java null) are "".
type MaskResult struct {
	MaskEnabled   bool   `json:"maskEnabled"`
	MaskType      string `json:"maskType"`
	MaskedValue   string `json:"maskedValue"`
	MaskCondition string `json:"maskCondition"`
	// Transformer is the mask type's transformer from the service-def.
	Transformer string `json:"transformer"`
	PolicyID    int64  `json:"policyId"`
	Audited     bool   `json:"audited"`
}

// RowFilterResult is RangerAccessResult of a row-filter request.
type RowFilterResult struct {
	FilterEnabled bool   `json:"filterEnabled"`
	FilterExpr    string `json:"filterExpr"`
	PolicyID      int64  `json:"policyId"`
	Audited       bool   `json:"audited"`
}

// AccessInfo is RangerResourceAccessInfo: who may and who may not access a
// resource; each list sorted.
type AccessInfo struct {
	AllowedUsers  []string `json:"allowedUsers"`
	AllowedGroups []string `json:"allowedGroups"`
	DeniedUsers   []string `json:"deniedUsers"`
	DeniedGroups  []string `json:"deniedGroups"`
}

// Access is RangerBasePlugin.isAccessAllowed (audit policies evaluated).
func (r *Ranger) Access(ctx context.Context, q Request) (AccessResult, error) {
	var res AccessResult
	err := r.p.call(ctx, q.wire("access"), &res)
	return res, err
}

// Mask is RangerBasePlugin.evalDataMaskPolicies.
func (r *Ranger) Mask(ctx context.Context, q Request) (MaskResult, error) {
	var res MaskResult
	err := r.p.call(ctx, q.wire("mask"), &res)
	return res, err
}

// RowFilter is RangerBasePlugin.evalRowFilterPolicies.
func (r *Ranger) RowFilter(ctx context.Context, q Request) (RowFilterResult, error) {
	var res RowFilterResult
	err := r.p.call(ctx, q.wire("rowfilter"), &res)
	return res, err
}

// AccessInfo is RangerBasePlugin.getResourceAccessInfo.
func (r *Ranger) AccessInfo(ctx context.Context, q Request) (AccessInfo, error) {
	var res AccessInfo
	err := r.p.call(ctx, q.wire("accessinfo"), &res)
	return res, err
}

// BatchItem is one evaluation of a Batch: Op is "access", "mask" or
// "rowfilter".
type BatchItem struct {
	Op      string
	Request Request
}

// BatchAnswer is one evaluation's answer: the result of its Op, or Err,
// what the oracle said when that evaluation failed (the others still
// answer).
type BatchAnswer struct {
	Access    AccessResult
	Mask      MaskResult
	RowFilter RowFilterResult
	Err       string
}

// Batch evaluates many requests in one oracle line, in order: a
// differential run asks thousands of questions per bundle, and a pipe
// round trip each would cost more than Ranger's evaluation.
func (r *Ranger) Batch(ctx context.Context, items []BatchItem) ([]BatchAnswer, error) {
	reqs := make([]map[string]any, len(items))
	for i, it := range items {
		switch it.Op {
		case "access", "mask", "rowfilter":
		default:
			return nil, fmt.Errorf("interop: batch op %q: want access, mask or rowfilter", it.Op)
		}
		reqs[i] = it.Request.wire(it.Op)
	}
	var res struct {
		Results []json.RawMessage `json:"results"`
	}
	if err := r.p.call(ctx, map[string]any{"op": "batch", "requests": reqs}, &res); err != nil {
		return nil, err
	}
	if len(res.Results) != len(items) {
		return nil, fmt.Errorf("interop: ranger oracle answered %d results for a batch of %d", len(res.Results), len(items))
	}
	out := make([]BatchAnswer, len(items))
	for i, raw := range res.Results {
		var head struct {
			Error *string `json:"error"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return nil, fmt.Errorf("interop: batch answer %d: %w", i, err)
		}
		if head.Error != nil {
			out[i].Err = *head.Error
			continue
		}
		var dst any
		switch items[i].Op {
		case "access":
			dst = &out[i].Access
		case "mask":
			dst = &out[i].Mask
		default:
			dst = &out[i].RowFilter
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			return nil, fmt.Errorf("interop: batch answer %d: %w", i, err)
		}
	}
	return out, nil
}
