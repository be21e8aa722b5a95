// Package policytest runs Apache Ranger's policy-engine test files
// (agents-common/src/test/resources/policyengine/*.json in apache/ranger)
// against pgranger's policy engine, so the same cases can be checked from
// `go test` and from the `pgranger test` command.
//
// A file holds a serviceDef, policies (and tagPolicyInfo, userRoles,
// groupRoles, superUsers, ...) and a list of tests, each a request with the
// result Ranger's engine gives. Access tests compare isAllowed and the
// deciding policy id (Ranger's own runner compares only isAllowed and
// isAudited; pgranger does not audit, so isAudited is not compared). Mask
// tests compare maskType, maskedValue and policyId; row-filter tests
// filterExpr and policyId.
package policytest

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
)

// Suite is one loaded test file with its engine.
type Suite struct {
	File   string // base name of the file
	Engine *policy.Engine
	// Updated is the engine after the file's updatedPolicies (policy
	// deltas) are applied; nil when the file has none. Its cases
	// (updatedTests) run against it.
	Updated *policy.Engine
	Cases   []Case

	// Bundle is what Engine was built from, and Deltas (nil when the file
	// has no updatedPolicies) the policy deltas as Ranger Admin would send
	// them: a ServicePolicies document with policyDeltas and no policies.
	// Other engines (Ranger's own, in internal/interop) are given the same.
	Bundle *ranger.Bundle
	Deltas *ranger.ServicePolicies
}

// Case is one check: a test of the file can hold an access, a mask and a
// row-filter expectation, each a Case of its own.
type Case struct {
	Name    string
	Kind    string // "access", "mask", "rowfilter" or "accessinfo"
	Subject policy.Subject
	Request policy.Request
	// AccessTypes and AnyAccess come from the request context keys
	// ACCESSTYPES and ISANYACCESS: several access types, any or all needed.
	AccessTypes []string
	AnyAccess   bool

	WantAllowed   bool
	WantAudited   *bool // access cases: Ranger's isAudited, when the file gives it
	WantPolicyID  int64 // Ranger's convention: -1 when no policy decided
	WantMaskType  string
	WantMaskValue string
	WantFilter    string
	HasFilter     bool
	WantInfo      policy.ResourceAccessInfo // "accessinfo" cases

	UserAttributes  map[string]map[string]string
	GroupAttributes map[string]map[string]string

	// FileRequest is the test's request object as the file writes it, for
	// runners that build their own request from it.
	FileRequest json.RawMessage

	// AfterDeltas: a case of updatedTests, run against Suite.Updated.
	AfterDeltas bool
}

// Status of a case.
type Status string

// Case outcomes.
const (
	Passed    Status = "passed"
	Failed    Status = "failed"
	Different Status = "known-different"
)

// Result is the outcome of one case.
type Result struct {
	Case   string
	Kind   string
	Status Status
	Want   string
	Got    string
	Reason string // for known differences: why pgranger differs
}

// Report is the outcome of a suite.
type Report struct {
	File    string
	Results []Result
	Passed  int
	Failed  int
	Known   int
}

// String is "file: N passed, M failed, K known-different".
func (r Report) String() string {
	return fmt.Sprintf("%s: %d passed, %d failed, %d known-different", r.File, r.Passed, r.Failed, r.Known)
}

// Aspect says what a known difference may change.
type Aspect string

// Aspects of known differences.
const (
	// AspectPolicyID: the decision matches, only the reported policy id
	// differs.
	AspectPolicyID Aspect = "policyId"
	// AspectExpression: the expected value has ${{USER.attr}} expressions
	// resolved; pgranger returns them verbatim for the SQL layer to expand.
	// The case counts as known-different only if expanding them with the
	// test's userAttributes gives the expected value.
	AspectExpression Aspect = "expression"
	// AspectDecision: the decision itself differs, on purpose.
	AspectDecision Aspect = "decision"
	// AspectCondition: the case depends on a condition evaluator pgranger
	// does not have yet; it fails closed instead (docs/policy-semantics.md,
	// "Deliberate differences from Ranger"). Any outcome is accepted.
	AspectCondition Aspect = "condition"
)

// KnownDifference is a documented, deliberate difference from a Ranger
// fixture.
type KnownDifference struct {
	File   string
	Case   string
	Kind   string
	Aspect Aspect
	Ranger string // what the file expects
	Reason string // what pgranger does, and why
}

func knownDifference(file string, c *Case) *KnownDifference {
	for i := range KnownDifferences {
		kd := &KnownDifferences[i]
		if kd.File == file && kd.Case == c.Name && kd.Kind == c.Kind {
			return kd
		}
	}
	return nil
}

// The file format (TestPolicyEngine.PolicyEngineTestCase).
type fileFormat struct {
	ServiceName   string                   `json:"serviceName"`
	ServiceDef    *ranger.RangerServiceDef `json:"serviceDef"`
	Policies      []ranger.RangerPolicy    `json:"policies"`
	TagPolicyInfo *struct {
		ServiceName   string                   `json:"serviceName"`
		ServiceDef    *ranger.RangerServiceDef `json:"serviceDef"`
		TagPolicies   []ranger.RangerPolicy    `json:"tagPolicies"`
		ServiceConfig ranger.StringMap         `json:"serviceConfig"`
	} `json:"tagPolicyInfo"`
	UserRoles   map[string][]string `json:"userRoles"`
	GroupRoles  map[string][]string `json:"groupRoles"`
	RoleRoles   map[string][]string `json:"roleRoles"`
	SuperUsers  []string            `json:"superUsers"`
	SuperGroups []string            `json:"superGroups"`
	// Users, groups and roles never audited (plugin configuration
	// .audit.exclude.users|groups|roles in Ranger's runner).
	AuditExcludedUsers  []string                           `json:"auditExcludedUsers"`
	AuditExcludedGroups []string                           `json:"auditExcludedGroups"`
	AuditExcludedRoles  []string                           `json:"auditExcludedRoles"`
	ServiceConfig       ranger.StringMap                   `json:"serviceConfig"`
	AuditMode           string                             `json:"auditMode"`
	Tests               []testFormat                       `json:"tests"`
	SecurityZones       map[string]ranger.SecurityZoneInfo `json:"securityZones"`
	// updatedPolicies: policy deltas (and zones with theirs) applied
	// after the tests, then updatedTests run (Ranger's incremental
	// policy-engine tests).
	UpdatedPolicies *struct {
		PolicyDeltas  []ranger.RangerPolicyDelta         `json:"policyDeltas"`
		SecurityZones map[string]ranger.SecurityZoneInfo `json:"securityZones"`
	} `json:"updatedPolicies"`
	UpdatedTests []testFormat `json:"updatedTests"`
}

type testFormat struct {
	Name    string `json:"name"`
	Request struct {
		Resource struct {
			Elements  map[string]json.RawMessage `json:"elements"`
			OwnerUser string                     `json:"ownerUser"`
		} `json:"resource"`
		AccessType string `json:"accessType"`
		// ResourceMatchingScope SELF_OR_DESCENDANTS; isDescendantDenyIgnored
		// (Ranger's default true).
		ResourceMatchingScope   string                     `json:"resourceMatchingScope"`
		IsDescendantDenyIgnored *bool                      `json:"isDescendantDenyIgnored"`
		User                    string                     `json:"user"`
		UserGroups              []string                   `json:"userGroups"`
		UserRoles               []string                   `json:"userRoles"`
		Action                  string                     `json:"action"`
		AccessTime              json.RawMessage            `json:"accessTime"`
		Context                 map[string]json.RawMessage `json:"context"`
	} `json:"request"`
	Result *struct {
		IsAllowed bool  `json:"isAllowed"`
		IsAudited *bool `json:"isAudited"`
		PolicyID  int64 `json:"policyId"`
	} `json:"result"`
	DataMaskResult *struct {
		AdditionalInfo struct {
			MaskType    *string `json:"maskType"`
			MaskedValue *string `json:"maskedValue"`
		} `json:"additionalInfo"`
		PolicyID int64 `json:"policyId"`
	} `json:"dataMaskResult"`
	RowFilterResult *struct {
		AdditionalInfo struct {
			FilterExpr *string `json:"filterExpr"`
		} `json:"additionalInfo"`
		PolicyID int64 `json:"policyId"`
	} `json:"rowFilterResult"`
	ResourceAccessInfo *struct {
		AllowedUsers  []string `json:"allowedUsers"`
		AllowedGroups []string `json:"allowedGroups"`
		DeniedUsers   []string `json:"deniedUsers"`
		DeniedGroups  []string `json:"deniedGroups"`
	} `json:"resourceAccessInfo"`
	UserAttributes  map[string]map[string]string `json:"userAttributes"`
	GroupAttributes map[string]map[string]string `json:"groupAttributes"`

	raw json.RawMessage // the request object as written
}

// rawRequests returns the request object of each test under key, as
// written in the file.
func rawRequests(data []byte, key string) ([]json.RawMessage, error) {
	var f map[string]json.RawMessage
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	var tests []struct {
		Request json.RawMessage `json:"request"`
	}
	if raw, ok := f[key]; ok {
		if err := json.Unmarshal(raw, &tests); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
	}
	out := make([]json.RawMessage, len(tests))
	for i, t := range tests {
		out[i] = t.Request
	}
	return out, nil
}

type tagJSON struct {
	Type       string            `json:"type"`
	Attributes map[string]string `json:"attributes"`
	MatchType  string            `json:"matchType"`
}

// LoadFile reads a Ranger policy-engine test file and builds its engine.
func LoadFile(path string) (*Suite, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f fileFormat
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	if f.ServiceDef == nil || f.Tests == nil {
		return nil, fmt.Errorf("%s: not a policy-engine test file (no serviceDef or tests)", filepath.Base(path))
	}
	cfg := ranger.StringMap{}
	for k, v := range f.ServiceConfig {
		cfg[k] = v
	}
	// superUsers/superGroups are plugin configuration in Ranger's runner;
	// pgranger reads super users from serviceConfig only.
	joinCfg := func(key string, extra []string) {
		if len(extra) == 0 {
			return
		}
		vals := extra
		if cur := cfg[key]; cur != "" {
			vals = append([]string{cur}, extra...)
		}
		cfg[key] = strings.Join(vals, ",")
	}
	joinCfg("ranger.plugin.super.users", f.SuperUsers)
	joinCfg("ranger.plugin.super.groups", f.SuperGroups)
	joinCfg("ranger.plugin.audit.exclude.users", f.AuditExcludedUsers)
	joinCfg("ranger.plugin.audit.exclude.groups", f.AuditExcludedGroups)
	joinCfg("ranger.plugin.audit.exclude.roles", f.AuditExcludedRoles)

	sp := &ranger.ServicePolicies{
		ServiceName:   f.ServiceName,
		PolicyVersion: 100,
		Policies:      f.Policies,
		ServiceDef:    f.ServiceDef,
		AuditMode:     f.AuditMode,
		ServiceConfig: cfg,
		SecurityZones: f.SecurityZones,
	}
	if sp.AuditMode == "" {
		sp.AuditMode = ranger.AuditModeDefault
	}
	if t := f.TagPolicyInfo; t != nil {
		sp.TagPolicies = &ranger.TagPolicies{ServiceName: t.ServiceName, PolicyVersion: -1, Policies: t.TagPolicies, ServiceDef: t.ServiceDef, ServiceConfig: t.ServiceConfig, AuditMode: sp.AuditMode}
	}
	bundle := &ranger.Bundle{Policies: sp, Roles: rolesFromMappings(f.ServiceName, f.UserRoles, f.GroupRoles, f.RoleRoles)}
	eng, err := policy.NewEngine(bundle, policy.Options{ReadTagFile: classpathReader(filepath.Dir(path))})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	s := &Suite{File: filepath.Base(path), Engine: eng, Bundle: bundle}
	rawTests, err := rawRequests(data, "tests")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.File, err)
	}
	for i := range f.Tests {
		f.Tests[i].raw = rawTests[i]
		cs, err := casesOf(&f.Tests[i])
		if err != nil {
			return nil, fmt.Errorf("%s: test %q: %w", s.File, f.Tests[i].Name, err)
		}
		s.Cases = append(s.Cases, cs...)
	}
	if u := f.UpdatedPolicies; u != nil {
		// As RangerPolicyEngineImpl.getPolicyEngine(engine, policies):
		// the deltas apply to the policies the first engine had, the
		// zones' deltas to each zone's policies.
		up := *sp
		up.Policies = ranger.ApplyPolicyDeltas(f.Policies, u.PolicyDeltas, f.ServiceDef.Name)
		up.SecurityZones = map[string]ranger.SecurityZoneInfo{}
		for name, z := range u.SecurityZones {
			z.Policies = ranger.ApplyPolicyDeltas(f.SecurityZones[name].Policies, z.PolicyDeltas, f.ServiceDef.Name)
			z.PolicyDeltas = nil
			up.SecurityZones[name] = z
		}
		ub := *bundle
		ub.Policies = &up
		if s.Updated, err = policy.NewEngine(&ub, policy.Options{ReadTagFile: classpathReader(filepath.Dir(path))}); err != nil {
			return nil, fmt.Errorf("%s: after updatedPolicies: %w", s.File, err)
		}
		s.Deltas = &ranger.ServicePolicies{ServiceName: sp.ServiceName, PolicyVersion: sp.PolicyVersion + 1, ServiceDef: sp.ServiceDef,
			AuditMode: sp.AuditMode, ServiceConfig: sp.ServiceConfig, PolicyDeltas: u.PolicyDeltas, SecurityZones: u.SecurityZones}
		rawUpdated, err := rawRequests(data, "updatedTests")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.File, err)
		}
		for i := range f.UpdatedTests {
			f.UpdatedTests[i].raw = rawUpdated[i]
			cs, err := casesOf(&f.UpdatedTests[i])
			if err != nil {
				return nil, fmt.Errorf("%s: updated test %q: %w", s.File, f.UpdatedTests[i].Name, err)
			}
			for j := range cs {
				cs[j].AfterDeltas = true
				cs[j].Name += " (after updatedPolicies)"
			}
			s.Cases = append(s.Cases, cs...)
		}
	} else if len(f.UpdatedTests) > 0 {
		return nil, fmt.Errorf("%s: updatedTests without updatedPolicies", s.File)
	}
	return s, nil
}

// classpathReader resolves a file a tag enricher names the way Ranger's
// test classpath does for these files: the name is a classpath path such
// as /policyengine/resourceTags.json, and the classpath root holds the
// test files' folder, so the document is the test file's sibling with the
// name's base name.
func classpathReader(dir string) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		return os.ReadFile(filepath.Join(dir, path.Base(filepath.ToSlash(name))))
	}
}

// rolesFromMappings builds RangerRoles the way Ranger's runner does: one
// role per (member, role) pair.
func rolesFromMappings(service string, users, groups, roles map[string][]string) *ranger.RangerRoles {
	if len(users)+len(groups)+len(roles) == 0 {
		return nil
	}
	rr := &ranger.RangerRoles{ServiceName: service, RoleVersion: -1}
	add := func(m map[string][]string, mk func(member, role string) ranger.RangerRole) {
		members := make([]string, 0, len(m))
		for k := range m {
			members = append(members, k)
		}
		sort.Strings(members)
		for _, member := range members {
			for _, role := range m[member] {
				rr.RangerRoles = append(rr.RangerRoles, mk(member, role))
			}
		}
	}
	add(users, func(m, r string) ranger.RangerRole {
		return ranger.RangerRole{Name: r, IsEnabled: true, Users: []ranger.RoleMember{{Name: m}}}
	})
	add(groups, func(m, r string) ranger.RangerRole {
		return ranger.RangerRole{Name: r, IsEnabled: true, Groups: []ranger.RoleMember{{Name: m}}}
	})
	add(roles, func(m, r string) ranger.RangerRole {
		return ranger.RangerRole{Name: r, IsEnabled: true, Roles: []ranger.RoleMember{{Name: m}}}
	})
	return rr
}

func casesOf(t *testFormat) ([]Case, error) {
	base := Case{
		Name:            t.Name,
		Subject:         policy.Subject{User: t.Request.User, Groups: t.Request.UserGroups, Roles: t.Request.UserRoles},
		UserAttributes:  t.UserAttributes,
		GroupAttributes: t.GroupAttributes,
		FileRequest:     t.raw,
	}
	if attrs, ok := t.UserAttributes[t.Request.User]; ok {
		base.Subject.Attributes = attrs
	}
	req := policy.Request{Resource: map[string][]string{}, Owner: t.Request.Resource.OwnerUser, Access: t.Request.AccessType,
		SelfOrDescendants: t.Request.ResourceMatchingScope == "SELF_OR_DESCENDANTS", Action: t.Request.Action,
		DescendantDeny: t.Request.IsDescendantDenyIgnored != nil && !*t.Request.IsDescendantDenyIgnored}
	for name, raw := range t.Request.Resource.Elements {
		var one string
		if err := json.Unmarshal(raw, &one); err == nil {
			req.Resource[name] = []string{one}
			continue
		}
		var many []string
		if err := json.Unmarshal(raw, &many); err != nil {
			return nil, fmt.Errorf("resource element %q: want a string or a list of strings", name)
		}
		req.Resource[name] = many
	}
	if at, ok := parseAccessTime(t.Request.AccessTime); ok {
		req.At = at
	}
	if raw, ok := t.Request.Context["TAGS"]; ok {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("context TAGS: want a JSON string")
		}
		req.Tags = []policy.RequestTag{}
		if strings.TrimSpace(s) != "" {
			var tags []tagJSON
			if err := json.Unmarshal([]byte(s), &tags); err != nil {
				return nil, fmt.Errorf("context TAGS: %w", err)
			}
			for _, tg := range tags {
				req.Tags = append(req.Tags, policy.RequestTag{Type: tg.Type, Attributes: tg.Attributes, MatchType: tg.MatchType})
			}
		}
	}
	if err := requestContext(t.Request.Context, &req); err != nil {
		return nil, err
	}
	if raw, ok := t.Request.Context["ACCESSTYPES"]; ok {
		if err := json.Unmarshal(raw, &base.AccessTypes); err != nil {
			return nil, fmt.Errorf("context ACCESSTYPES: %w", err)
		}
	}
	if raw, ok := t.Request.Context["ISANYACCESS"]; ok {
		_ = json.Unmarshal(raw, &base.AnyAccess)
	}
	base.Request = req

	var out []Case
	if r := t.Result; r != nil {
		c := base
		c.Kind, c.WantAllowed, c.WantPolicyID, c.WantAudited = "access", r.IsAllowed, r.PolicyID, r.IsAudited
		out = append(out, c)
	}
	if r := t.DataMaskResult; r != nil {
		c := base
		c.Kind, c.WantPolicyID = "mask", r.PolicyID
		if r.AdditionalInfo.MaskType != nil {
			c.WantMaskType = *r.AdditionalInfo.MaskType
		}
		if r.AdditionalInfo.MaskedValue != nil {
			c.WantMaskValue = *r.AdditionalInfo.MaskedValue
		}
		out = append(out, c)
	}
	if r := t.RowFilterResult; r != nil {
		c := base
		c.Kind, c.WantPolicyID = "rowfilter", r.PolicyID
		if r.AdditionalInfo.FilterExpr != nil {
			c.WantFilter, c.HasFilter = *r.AdditionalInfo.FilterExpr, true
		}
		out = append(out, c)
	}
	if r := t.ResourceAccessInfo; r != nil {
		c := base
		c.Kind = "accessinfo"
		c.WantInfo = policy.ResourceAccessInfo{AllowedUsers: sortedCopy(r.AllowedUsers), AllowedGroups: sortedCopy(r.AllowedGroups),
			DeniedUsers: sortedCopy(r.DeniedUsers), DeniedGroups: sortedCopy(r.DeniedGroups)}
		out = append(out, c)
	}
	return out, nil
}

func sortedCopy(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return out
}

func infoString(i policy.ResourceAccessInfo) string {
	return fmt.Sprintf("allowedUsers=%v allowedGroups=%v deniedUsers=%v deniedGroups=%v", i.AllowedUsers, i.AllowedGroups, i.DeniedUsers, i.DeniedGroups)
}

// requestContext reads a test's context into the request: REQUESTED_RESOURCES
// (a JSON string {"requestedResources":[{"elements":{…}}]}) and every other
// string value as a context attribute.
func requestContext(ctx map[string]json.RawMessage, req *policy.Request) error {
	for k, raw := range ctx {
		switch k {
		case "TAGS", "ACCESSTYPES", "ISANYACCESS":
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			continue
		}
		if req.Context == nil {
			req.Context = &policy.RequestContext{Attributes: map[string]string{}}
		}
		if k != "REQUESTED_RESOURCES" {
			req.Context.Attributes[k] = s
			continue
		}
		var rr struct {
			RequestedResources []struct {
				Elements map[string]string `json:"elements"`
			} `json:"requestedResources"`
		}
		if err := json.Unmarshal([]byte(s), &rr); err != nil {
			return fmt.Errorf("context REQUESTED_RESOURCES: %w", err)
		}
		req.Context.RequestedResources = []policy.Resource{}
		for _, r := range rr.RequestedResources {
			req.Context.RequestedResources = append(req.Context.RequestedResources,
				policy.Resource{Database: r.Elements["database"], Table: r.Elements["table"], Column: r.Elements["column"]})
		}
	}
	return nil
}

func parseAccessTime(raw json.RawMessage) (time.Time, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return time.Time{}, false
	}
	var ms int64
	if json.Unmarshal(raw, &ms) == nil {
		return time.UnixMilli(ms), true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05.000Z0700", "Jan 2, 2006 3:04:05 PM", "2006/01/02 15:04:05"} {
			if t, err := time.Parse(layout, s); err == nil {
				return t, true
			}
		}
	}
	return time.Time{}, false
}

// Run evaluates every case.
func (s *Suite) Run() Report {
	rep := Report{File: s.File}
	for i := range s.Cases {
		c := &s.Cases[i]
		res := s.runCase(c)
		switch res.Status {
		case Passed:
			rep.Passed++
		case Failed:
			rep.Failed++
		case Different:
			rep.Known++
		}
		rep.Results = append(rep.Results, res)
	}
	return rep
}

func rangerID(id int64) int64 {
	if id == 0 {
		return -1
	}
	return id
}

// Answer is pgranger's answer to a case, in the terms of Ranger's result
// (policy ids -1 when no policy decided).
type Answer struct {
	Allowed  bool
	Audited  bool
	PolicyID int64
	Reason   string // access: why

	MaskType    string // MASK_NONE when a MASK_NONE item matched
	MaskedValue string

	FilterExpr string // several filters joined with " AND "
	Filters    int    // how many filters applied

	Info policy.ResourceAccessInfo
}

// Answer evaluates a case with pgranger's engine (the updated engine for
// cases after updatedPolicies).
func (s *Suite) Answer(c *Case) Answer {
	eng := s.Engine
	if c.AfterDeltas {
		eng = s.Updated
	}
	var a Answer
	switch c.Kind {
	case "access":
		d := access(eng, c)
		a.Allowed, a.PolicyID, a.Reason = d.Allowed, rangerID(d.PolicyID), d.Reason
		a.Audited = evaluate(eng, c, policy.WantAudit, policy.Decided{Denied: !d.Allowed}).Audited
	case "mask":
		m := evaluate(eng, c, policy.WantMask, policy.Decided{}).Mask
		if m.Type == "" && m.PolicyID != 0 {
			// The engine reports a matched MASK_NONE as no mask, with the
			// deciding policy; Ranger's result names the type.
			m.Type = ranger.MaskTypeNone
		}
		a.MaskType, a.MaskedValue, a.PolicyID = m.Type, m.ValueExpr, rangerID(m.PolicyID)
	case "accessinfo":
		a.Info = eng.ResourceAccessInfo(c.Request)
	case "rowfilter":
		rf := evaluate(eng, c, policy.WantRowFilter, policy.Decided{}).RowFilter
		a.PolicyID, a.Filters = -1, len(rf.Exprs)
		if len(rf.Exprs) > 0 {
			a.FilterExpr, a.PolicyID = strings.Join(rf.Exprs, " AND "), rf.PolicyIDs[0]
		}
	}
	return a
}

func (s *Suite) runCase(c *Case) Result {
	res := Result{Case: c.Name, Kind: c.Kind}
	a := s.Answer(c)
	var decisionOK, idOK bool
	switch c.Kind {
	case "access":
		res.Want = fmt.Sprintf("allowed=%v policyId=%d", c.WantAllowed, c.WantPolicyID)
		res.Got = fmt.Sprintf("allowed=%v policyId=%d (%s)", a.Allowed, a.PolicyID, a.Reason)
		if c.WantAudited != nil {
			res.Want += fmt.Sprintf(" audited=%v", *c.WantAudited)
			res.Got += fmt.Sprintf(" audited=%v", a.Audited)
		}
		decisionOK = a.Allowed == c.WantAllowed && (c.WantAudited == nil || *c.WantAudited == a.Audited)
		idOK = a.PolicyID == c.WantPolicyID
	case "mask":
		res.Want = fmt.Sprintf("maskType=%q maskedValue=%q policyId=%d", c.WantMaskType, c.WantMaskValue, c.WantPolicyID)
		res.Got = fmt.Sprintf("maskType=%q maskedValue=%q policyId=%d", a.MaskType, a.MaskedValue, a.PolicyID)
		idOK = a.PolicyID == c.WantPolicyID || (a.MaskType == "" && c.WantPolicyID == -1)
		decisionOK = a.MaskType == c.WantMaskType && a.MaskedValue == c.WantMaskValue
		if !decisionOK && a.MaskType == c.WantMaskType && idOK {
			if kd := knownDifference(s.File, c); kd != nil && kd.Aspect == AspectExpression && expandUserExprs(a.MaskedValue, c) == c.WantMaskValue {
				res.Status, res.Reason = Different, kd.Reason
				return res
			}
		}
	case "accessinfo":
		res.Want, res.Got = infoString(c.WantInfo), infoString(a.Info)
		decisionOK = res.Want == res.Got
		idOK = true
	case "rowfilter":
		res.Want = fmt.Sprintf("filterExpr=%q policyId=%d", c.WantFilter, c.WantPolicyID)
		res.Got = fmt.Sprintf("filterExpr=%q policyId=%d", a.FilterExpr, a.PolicyID)
		decisionOK = a.FilterExpr == c.WantFilter && a.Filters <= 1
		idOK = a.PolicyID == c.WantPolicyID
		if !decisionOK && idOK {
			if kd := knownDifference(s.File, c); kd != nil && kd.Aspect == AspectExpression && expandUserExprs(a.FilterExpr, c) == c.WantFilter {
				res.Status, res.Reason = Different, kd.Reason
				return res
			}
		}
	}
	switch {
	case decisionOK && idOK:
		res.Status = Passed
	default:
		kd := knownDifference(s.File, c)
		if kd != nil && (kd.Aspect == AspectDecision || kd.Aspect == AspectCondition || kd.Aspect == AspectPolicyID && decisionOK) {
			res.Status, res.Reason = Different, kd.Reason
		} else {
			res.Status = Failed
		}
	}
	return res
}

// evaluate asks eng the case's request for the parts want names.
func evaluate(eng *policy.Engine, c *Case, want policy.Want, decided policy.Decided) policy.Result {
	req := c.Request
	req.Subject, req.Want, req.Decided = &c.Subject, want, decided
	return *eng.Evaluate(&req)
}

// access evaluates the request's access type, or each of ACCESSTYPES
// (allowed if any is, with ISANYACCESS; else if all are).
func access(eng *policy.Engine, c *Case) policy.Decision {
	if len(c.AccessTypes) == 0 {
		return evaluate(eng, c, policy.WantAccess, policy.Decided{}).Access
	}
	var last policy.Decision
	for _, at := range c.AccessTypes {
		req := c.Request
		req.Subject, req.Access, req.Want = &c.Subject, at, policy.WantAccess
		d := eng.Evaluate(&req).Access
		if d.Allowed == c.AnyAccess {
			return d
		}
		last = d
	}
	return last
}

var userExpr = regexp.MustCompile(`\$\{\{\s*USER\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// expandUserExprs substitutes ${{USER.attr}} with the test's attributes: the
// check that a known expression difference is only that.
func expandUserExprs(s string, c *Case) string {
	attrs := c.UserAttributes[c.Subject.User]
	return userExpr.ReplaceAllStringFunc(s, func(m string) string {
		name := userExpr.FindStringSubmatch(m)[1]
		if name == "_name" {
			return c.Subject.User
		}
		return attrs[name]
	})
}
