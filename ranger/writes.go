package ranger

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// This file is what Ranger Admin does to a service's policies when a
// client writes them (docs/authoring.md; in apache/ranger, ServiceREST's
// grantAccess/revokeAccess, ServiceRESTUtil.processGrantRequest and
// processRevokeRequest, and RangerPolicyValidator's name and signature
// rules). pgranger applies it itself to the policy file of policy.source =
// "file", so authoring means the same thing against a file as against
// Ranger; ranger/rangertest applies it for its fake Ranger Admin.

// Validation error codes Ranger Admin answers with (ValidationErrorCode).
const (
	ErrCodeNameConflict     = 3006 // another policy already has this name
	ErrCodeResourceConflict = 3010 // another enabled policy has the same resource signature
)

// WriteError is Ranger Admin's refusal of a write: its HTTP status, its
// validation error code when it has one, and its message (msgDesc), which
// pgranger passes on to the SQL client.
type WriteError struct {
	Status  int
	Code    int // ErrCode*, 0 when the refusal has none
	Message string
}

func (e *WriteError) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("HTTP %d, error code %d: %s", e.Status, e.Code, e.Message)
	}
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message)
}

// validationError is the 400 Ranger's validator answers, with its message
// in Ranger's words.
func validationError(code int, reason, field string) *WriteError {
	return &WriteError{Status: http.StatusBadRequest, Code: code,
		Message: fmt.Sprintf("(0) Validation failure: error code[%d], reason[%s], field[%s], input[null], type[semantically incorrect] ", code, reason, field)}
}

// GrantRevokeRequest is the body of Ranger's secure grant and revoke
// endpoints (plugin/util/GrantRevokeRequest.java), as HiveServer2 sends
// it for SQL GRANT and REVOKE.
type GrantRevokeRequest struct {
	Grantor                    string            `json:"grantor"`
	GrantorGroups              []string          `json:"grantorGroups,omitempty"`
	Resource                   map[string]string `json:"resource"`
	Users                      []string          `json:"users,omitempty"`
	Groups                     []string          `json:"groups,omitempty"`
	Roles                      []string          `json:"roles,omitempty"`
	AccessTypes                []string          `json:"accessTypes"`
	DelegateAdmin              bool              `json:"delegateAdmin"`
	EnableAudit                bool              `json:"enableAudit"`
	ReplaceExistingPermissions bool              `json:"replaceExistingPermissions"`
	IsRecursive                bool              `json:"isRecursive"`
	ClientIPAddress            string            `json:"clientIPAddress,omitempty"`
	ClientType                 string            `json:"clientType,omitempty"`
	SessionID                  string            `json:"sessionId,omitempty"`
	ClusterName                string            `json:"clusterName,omitempty"`
	ZoneName                   string            `json:"zoneName,omitempty"`
}

// ResourceValues splits a request's resource value at commas, as Ranger
// 2.5 and later do ("a,b" names the columns a and b).
func ResourceValues(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// grantPolicy is the policy a grant would create: its resources are the
// request's, so its signature is what an exact match must have.
func grantPolicy(req *GrantRevokeRequest) *RangerPolicy {
	p := &RangerPolicy{IsEnabled: true, IsAuditEnabled: req.EnableAudit, PolicyType: PolicyTypeAccess, ZoneName: req.ZoneName,
		Resources: map[string]RangerPolicyResource{}}
	for k, v := range req.Resource {
		p.Resources[k] = RangerPolicyResource{Values: ResourceValues(v), IsRecursive: req.IsRecursive}
	}
	return p
}

// ExactMatch is the policy a grant or revoke changes: the first enabled
// access policy whose resource signature equals the request's (same
// resource names and values, "*" compared as a value, no schedules, no
// conditions). nil when none: a grant then creates a policy, a revoke
// changes nothing.
func (sp *ServicePolicies) ExactMatch(req *GrantRevokeRequest) *RangerPolicy {
	sig := ResourceSignature(grantPolicy(req))
	for i := range sp.Policies {
		p := &sp.Policies[i]
		if p.IsEnabled && p.PolicyType == PolicyTypeAccess && ResourceSignature(p) == sig {
			return p
		}
	}
	return nil
}

// ApplyGrant is Ranger's grant: merged into the exact-match policy per
// principal (and its items compacted), or a new policy "grant-<millis>"
// with one allow item. It returns the policy that holds the grant and
// whether it was created.
func (sp *ServicePolicies) ApplyGrant(req *GrantRevokeRequest, now time.Time) (*RangerPolicy, bool, error) {
	if err := checkGrantee(req); err != nil {
		return nil, false, err
	}
	if p := sp.ExactMatch(req); p != nil {
		p.PolicyItems = applyToItems(p.PolicyItems, req, true)
		touch(p, req.Grantor, now)
		return p, false, nil
	}
	p := grantPolicy(req)
	p.Name = "grant-" + strconv.FormatInt(now.UnixMilli(), 10)
	for sp.PolicyByName(p.Name) != nil {
		// Two grants in one millisecond: Ranger would fail the second
		// with 3006; the file store takes the next millisecond instead.
		now = now.Add(time.Millisecond)
		p.Name = "grant-" + strconv.FormatInt(now.UnixMilli(), 10)
	}
	p.Description = "created by grant"
	p.Service = sp.ServiceName
	p.CreatedBy = req.Grantor
	item := RangerPolicyItem{DelegateAdmin: req.DelegateAdmin, Users: clone(req.Users), Groups: clone(req.Groups), Roles: clone(req.Roles)}
	for _, a := range req.AccessTypes {
		item.Accesses = append(item.Accesses, RangerPolicyItemAccess{Type: a, IsAllowed: true})
	}
	p.PolicyItems = []RangerPolicyItem{item}
	created, err := sp.CreatePolicy(*p, now)
	return created, true, err
}

// ApplyRevoke is Ranger's revoke: the listed accesses leave the
// principals' allow and deny-exception items of the exact-match policy
// (with delegateAdmin, the item's delegated admin goes too), the items are
// compacted, and no policy is ever deleted. With no exact match nothing
// changes and nothing is said (Ranger answers 200). It returns the policy
// it changed (nil when none) and whether anything changed.
func (sp *ServicePolicies) ApplyRevoke(req *GrantRevokeRequest, now time.Time) (*RangerPolicy, bool, error) {
	if err := checkGrantee(req); err != nil {
		return nil, false, err
	}
	p := sp.ExactMatch(req)
	if p == nil {
		return nil, false, nil
	}
	allow := applyToItems(p.PolicyItems, req, false)
	denyEx := applyToItems(p.DenyExceptions, req, false)
	if itemsEqual(allow, p.PolicyItems) && itemsEqual(denyEx, p.DenyExceptions) {
		return p, false, nil
	}
	p.PolicyItems, p.DenyExceptions = allow, denyEx
	touch(p, req.Grantor, now)
	return p, true, nil
}

func checkGrantee(req *GrantRevokeRequest) error {
	if len(req.Users) == 0 && len(req.Groups) == 0 && len(req.Roles) == 0 {
		return &WriteError{Status: http.StatusForbidden, Message: "Grantee users/groups/roles list is empty"}
	}
	return nil
}

func touch(p *RangerPolicy, by string, now time.Time) {
	p.Version++
	p.UpdatedBy = by
	p.UpdateTime = Timestamp{Time: now}
}

// principal is one user, group or role of an item.
type principal struct {
	kind byte // 'u', 'g', 'r'
	name string
}

// grantEntry is what one principal holds in one list of items.
type grantEntry struct {
	accesses []string
	admin    bool
}

// applyToItems splits items into one entry per principal (accesses
// merged), adds (grant) or removes (revoke) the request's accesses for
// the request's principals, and compacts again: principals with the same
// accesses and delegated admin share an item, entries with neither are
// dropped. Items with conditions are kept as they are, first: a grant
// must not widen what a condition restricts. Items come out in the order
// their first principal appeared, new principals last.
func applyToItems(items []RangerPolicyItem, req *GrantRevokeRequest, grant bool) []RangerPolicyItem {
	var kept []RangerPolicyItem
	var order []principal
	entries := map[principal]*grantEntry{}
	add := func(pr principal) *grantEntry {
		e := entries[pr]
		if e == nil {
			e = &grantEntry{}
			entries[pr] = e
			order = append(order, pr)
		}
		return e
	}
	for _, it := range items {
		if len(it.Conditions) > 0 {
			kept = append(kept, it)
			continue
		}
		for _, pr := range principalsOf(it.Users, it.Groups, it.Roles) {
			e := add(pr)
			for _, a := range it.Accesses {
				if a.IsAllowed {
					e.accesses = addAccess(e.accesses, a.Type)
				}
			}
			e.admin = e.admin || it.DelegateAdmin
		}
	}
	for _, pr := range principalsOf(req.Users, req.Groups, req.Roles) {
		if !grant && entries[pr] == nil {
			continue
		}
		e := add(pr)
		for _, a := range req.AccessTypes {
			if grant {
				e.accesses = addAccess(e.accesses, a)
			} else {
				e.accesses = removeAccess(e.accesses, a)
			}
		}
		switch {
		case grant && req.DelegateAdmin:
			e.admin = true
		case !grant && req.DelegateAdmin:
			e.admin = false
		}
	}
	out := kept
	index := map[string]int{}
	for _, pr := range order {
		e := entries[pr]
		if len(e.accesses) == 0 && !e.admin {
			continue
		}
		key := fmt.Sprintf("%t|%s", e.admin, strings.Join(sortedCopy(e.accesses), ","))
		i, ok := index[key]
		if !ok {
			it := RangerPolicyItem{DelegateAdmin: e.admin}
			for _, a := range e.accesses {
				it.Accesses = append(it.Accesses, RangerPolicyItemAccess{Type: a, IsAllowed: true})
			}
			out = append(out, it)
			i = len(out) - 1
			index[key] = i
		}
		switch pr.kind {
		case 'u':
			out[i].Users = append(out[i].Users, pr.name)
		case 'g':
			out[i].Groups = append(out[i].Groups, pr.name)
		default:
			out[i].Roles = append(out[i].Roles, pr.name)
		}
	}
	return out
}

func principalsOf(users, groups, roles []string) []principal {
	var out []principal
	for _, u := range users {
		out = append(out, principal{'u', u})
	}
	for _, g := range groups {
		out = append(out, principal{'g', g})
	}
	for _, r := range roles {
		out = append(out, principal{'r', r})
	}
	return out
}

// addAccess adds a (access types compare case-insensitively, as Ranger's
// validator matches them) and keeps the order of first appearance.
func addAccess(list []string, a string) []string {
	for _, x := range list {
		if strings.EqualFold(x, a) {
			return list
		}
	}
	return append(list, strings.ToLower(a))
}

func removeAccess(list []string, a string) []string {
	out := list[:0:0]
	for _, x := range list {
		if !strings.EqualFold(x, a) {
			out = append(out, x)
		}
	}
	return out
}

func itemsEqual(a, b []RangerPolicyItem) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.DelegateAdmin != y.DelegateAdmin || !sameStrings(x.Users, y.Users) || !sameStrings(x.Groups, y.Groups) ||
			!sameStrings(x.Roles, y.Roles) || len(x.Accesses) != len(y.Accesses) || len(x.Conditions) != len(y.Conditions) {
			return false
		}
		for j := range x.Accesses {
			if !strings.EqualFold(x.Accesses[j].Type, y.Accesses[j].Type) || x.Accesses[j].IsAllowed != y.Accesses[j].IsAllowed {
				return false
			}
		}
	}
	return true
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func clone(s []string) []string { return append([]string(nil), s...) }

// CreatePolicy adds p as Ranger Admin's create does: the name must be
// free in the zone (3006) and an enabled policy must not share p's
// resource signature with another enabled one (3010). The server-managed
// fields are set: a new id, a guid, version 1, the times and the service.
func (sp *ServicePolicies) CreatePolicy(p RangerPolicy, now time.Time) (*RangerPolicy, error) {
	if strings.TrimSpace(p.Name) == "" {
		return nil, &WriteError{Status: http.StatusBadRequest, Message: "(0) Validation failure: reason[Missing required field: name], field[name]"}
	}
	if q := sp.PolicyByName(p.Name); q != nil && q.ZoneName == p.ZoneName {
		return nil, validationError(ErrCodeNameConflict, fmt.Sprintf("Another policy already exists for this name: policy-name=[%s], service=[%s]", p.Name, sp.ServiceName), "name")
	}
	if q := sp.ConflictFor(&p); q != nil {
		return nil, validationError(ErrCodeResourceConflict, fmt.Sprintf("Another policy already exists for matching resource: policy-name=[%s], service=[%s]", q.Name, sp.ServiceName), "resources")
	}
	var maxID int64
	for _, q := range sp.Policies {
		maxID = max(maxID, q.ID)
	}
	p.ID = maxID + 1
	p.GUID = fmt.Sprintf("pgranger-%d-%d", now.UnixNano(), p.ID)
	p.Version = 1
	p.Service = sp.ServiceName
	p.CreateTime, p.UpdateTime = Timestamp{Time: now}, Timestamp{Time: now}
	p.UpdatedBy = p.CreatedBy
	p.ResourceSignature = ""
	sp.Policies = append(sp.Policies, p)
	return &sp.Policies[len(sp.Policies)-1], nil
}

// UpdatePolicy replaces the policy named name with p, as Ranger Admin's
// update by name does: 404 when there is none; the id, guid and create
// time stay, the version rises by one (Ranger ignores the version the
// client sends: the last writer wins); a new name must be free (3006) and
// the signature must not collide with another enabled policy (3010).
func (sp *ServicePolicies) UpdatePolicy(name string, p RangerPolicy, by string, now time.Time) (*RangerPolicy, error) {
	old := sp.PolicyByName(name)
	if old == nil {
		return nil, &WriteError{Status: http.StatusNotFound, Message: fmt.Sprintf("policy %q does not exist in service %q", name, sp.ServiceName)}
	}
	if p.Name == "" {
		p.Name = name
	}
	if p.Name != name {
		if q := sp.PolicyByName(p.Name); q != nil {
			return nil, validationError(ErrCodeNameConflict, fmt.Sprintf("Another policy already exists for this name: policy-name=[%s], service=[%s]", p.Name, sp.ServiceName), "name")
		}
	}
	probe := p
	probe.Name = name // ConflictFor skips the policy being replaced by its name
	if q := sp.ConflictFor(&probe); q != nil {
		return nil, validationError(ErrCodeResourceConflict, fmt.Sprintf("Another policy already exists for matching resource: policy-name=[%s], service=[%s]", q.Name, sp.ServiceName), "resources")
	}
	p.ID, p.GUID, p.CreateTime, p.CreatedBy = old.ID, old.GUID, old.CreateTime, old.CreatedBy
	p.Version = old.Version + 1
	p.Service = sp.ServiceName
	p.UpdateTime = Timestamp{Time: now}
	p.UpdatedBy = by
	p.ResourceSignature = ""
	*old = p
	return old, nil
}

// DeletePolicy removes the policy named name (404 when there is none).
func (sp *ServicePolicies) DeletePolicy(name string) error {
	for i := range sp.Policies {
		if sp.Policies[i].Name == name {
			sp.Policies = append(sp.Policies[:i], sp.Policies[i+1:]...)
			return nil
		}
	}
	return &WriteError{Status: http.StatusNotFound, Message: fmt.Sprintf("policy %q does not exist in service %q", name, sp.ServiceName)}
}

// Bump records a change of the service's policies: the version rises by
// one and the update time is now, as every write in Ranger Admin does, so
// a plugin's next download (or the file source's next check) sees it.
func (sp *ServicePolicies) Bump(now time.Time) {
	if sp.PolicyVersion < 0 {
		sp.PolicyVersion = 0
	}
	sp.PolicyVersion++
	sp.PolicyUpdateTime = Timestamp{Time: now}
}

// SortedNames returns the names of sp's policies in sorted order.
func (sp *ServicePolicies) SortedNames() []string {
	out := make([]string, 0, len(sp.Policies))
	for _, p := range sp.Policies {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}
