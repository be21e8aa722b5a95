// Package lint reports risky or broken Ranger policies: the findings of
// `pgranger lint`, one per problem in one policy, printed as
//
//	error: policy <id> "<name>": <finding>
//	warning: policy <id> "<name>": <finding>
//
// Errors change what users get in a way nobody meant; warnings are
// housekeeping (Rule.Severity). Rules:
//   - an allow item of an access policy grants the group public (or the
//     user {USER}, which is every user too) on a wildcard resource: a value
//     with * or ?, an empty value list, or an excludes list, on any resource
//     but column (all columns of one named table is an ordinary grant);
//   - no owner label: policyLabels is empty;
//   - an excludes resource (isExcludes) without a description saying why;
//   - a validity schedule whose end is past;
//   - a policy whose validity schedules all end within the next 7 days
//     (EndsSoonWindow): it is about to stop applying;
//   - a data-mask item whose mask type the serviceDef's dataMaskDef does not
//     declare (MASK_NONE, MASK_NULL and CUSTOM are Ranger's own and always
//     valid; tag policies' "hive:" prefix is stripped, another component's
//     prefix is reported).
package lint

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
)

// Rule names what a Finding is about; it is stable, so that tools can
// filter or grade findings by it.
type Rule string

const (
	RulePublicWildcard     Rule = "public-wildcard"      // public or {USER} granted on a wildcard resource
	RuleNoOwnerLabel       Rule = "no-owner-label"       // policyLabels is empty
	RuleExcludesNoReason   Rule = "excludes-no-reason"   // an excludes resource without a description
	RuleScheduleEnded      Rule = "schedule-ended"       // a validity schedule whose end is past
	RuleEndsSoon           Rule = "ends-soon"            // the policy stops applying within EndsSoonWindow
	RuleNeverApplies       Rule = "never-applies"        // every validity schedule has ended
	RuleMaskTypeComponent  Rule = "mask-type-component"  // a tag mask type for another component
	RuleMaskTypeCase       Rule = "mask-type-case"       // a mask type declared with other letter case
	RuleMaskTypeUndeclared Rule = "mask-type-undeclared" // a mask type the dataMaskDef does not declare
)

// EndsSoonWindow is how far ahead lint warns of a policy that stops
// applying (the alert on pgranger_policy_validity_remaining_seconds uses
// the same 7 days).
const EndsSoonWindow = 7 * 24 * time.Hour

// Severity grades a finding: an Error fails `pgranger lint`, a Warning
// only with --strict.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Severity of the rule: errors change what users get in a way nobody
// meant (public on a wildcard, a mask type Ranger would not apply), the
// rest is housekeeping.
func (r Rule) Severity() Severity {
	switch r {
	case RulePublicWildcard, RuleMaskTypeComponent, RuleMaskTypeCase, RuleMaskTypeUndeclared:
		return Error
	}
	return Warning
}

// Finding is one problem in one policy.
type Finding struct {
	PolicyID   int64
	PolicyName string
	Rule       Rule
	Message    string // what is wrong, without the policy
}

// Severity is the finding's rule's.
func (f Finding) Severity() Severity { return f.Rule.Severity() }

// String is the finding as `pgranger lint` prints it.
func (f Finding) String() string {
	return fmt.Sprintf("%s: policy %d %q: %s", f.Severity(), f.PolicyID, f.PolicyName, f.Message)
}

// Policies returns the findings for the resource policies, then the tag
// policies, in document order; schedules are judged at at.
func Policies(sp *ranger.ServicePolicies, at time.Time) []Finding {
	def := sp.ServiceDef
	if def == nil {
		def = policy.StockHiveServiceDef()
	}
	declared := map[string]bool{ranger.MaskTypeNone: true, ranger.MaskTypeNull: true, ranger.MaskTypeCustom: true}
	folded := map[string]string{}
	if def.DataMaskDef != nil {
		for _, mt := range def.DataMaskDef.MaskTypes {
			declared[mt.Name] = true
			folded[strings.ToLower(mt.Name)] = mt.Name
		}
	}
	var out []Finding
	lint := func(p *ranger.RangerPolicy, tagPolicy bool) {
		add := func(rule Rule, format string, args ...any) {
			out = append(out, Finding{PolicyID: p.ID, PolicyName: p.Name, Rule: rule, Message: fmt.Sprintf(format, args...)})
		}
		sets := append([]map[string]ranger.RangerPolicyResource{p.Resources}, p.AdditionalResources...)

		// public on wildcard resources.
		if p.PolicyType == ranger.PolicyTypeAccess && !tagPolicy {
			for _, res := range sets {
				wild := wildcardResources(res)
				if len(wild) == 0 {
					continue
				}
				for _, it := range p.PolicyItems {
					var who []string
					if containsString(it.Groups, "public") {
						who = append(who, "group public")
					}
					if containsString(it.Users, "{USER}") {
						who = append(who, "user {USER} (every user)")
					}
					if len(who) == 0 || accessList(it.Accesses) == "" {
						continue
					}
					add(RulePublicWildcard, "grants %s %s on wildcard resource %s", strings.Join(who, " and "), accessList(it.Accesses), describeResource(res))
				}
			}
		}
		// Owner labels.
		if len(p.PolicyLabels) == 0 {
			add(RuleNoOwnerLabel, "has no owner label (policyLabels is empty)")
		}
		// Excludes without a description.
		if strings.TrimSpace(p.Description) == "" {
			for _, res := range sets {
				for _, name := range sortedResNames(res) {
					if r := res[name]; r.IsExcludes {
						add(RuleExcludesNoReason, "excludes %s=%s but has no description saying why", name, strings.Join(r.Values, ","))
					}
				}
			}
		}
		// Expired schedules.
		if n := len(p.ValiditySchedules); n > 0 {
			expired := 0
			for _, vs := range p.ValiditySchedules {
				if end, ok := policy.ValidityEnd(vs); ok && end.Before(at) {
					expired++
					tz := vs.TimeZone
					if tz == "" {
						tz = "GMT"
					}
					add(RuleScheduleEnded, "validity schedule ended %s %s", strings.TrimSpace(vs.EndTime), tz)
				}
			}
			if expired == n {
				add(RuleNeverApplies, "every validity schedule has ended: the policy never applies")
			}
			if end, ok := policy.PolicyValidityEnd(p); ok && end.After(at) && end.Sub(at) <= EndsSoonWindow {
				add(RuleEndsSoon, "stops applying in %s, at %s UTC, when its last validity schedule ends", roughly(end.Sub(at)), end.UTC().Format("2006/01/02 15:04:05"))
			}
		}
		// Mask types.
		if p.PolicyType == ranger.PolicyTypeDataMask {
			compPrefix := def.Name + ":"
			for i, it := range p.DataMaskPolicyItems {
				if it.DataMaskInfo == nil {
					continue
				}
				typ := strings.TrimSpace(it.DataMaskInfo.DataMaskType)
				if typ == "" {
					continue
				}
				if tagPolicy {
					if strings.HasPrefix(typ, compPrefix) {
						typ = typ[len(compPrefix):]
					} else if strings.Contains(typ, ":") {
						add(RuleMaskTypeComponent, "mask item %d: mask type %q is for another component than %s", i+1, typ, def.Name)
						continue
					}
				}
				if declared[typ] {
					continue
				}
				if name, ok := folded[strings.ToLower(typ)]; ok {
					add(RuleMaskTypeCase, "mask item %d: mask type %q is declared as %q (Ranger compares mask type names exactly)", i+1, typ, name)
					continue
				}
				add(RuleMaskTypeUndeclared, "mask item %d: mask type %q is not declared in the serviceDef's dataMaskDef", i+1, typ)
			}
		}
	}
	for i := range sp.Policies {
		lint(&sp.Policies[i], false)
	}
	if sp.TagPolicies != nil {
		for i := range sp.TagPolicies.Policies {
			lint(&sp.TagPolicies.Policies[i], true)
		}
	}
	return out
}

// roughly writes a duration in days and hours ("4 days 12 hours").
func roughly(d time.Duration) string {
	h := int(d.Hours())
	days, hours := h/24, h%24
	plural := func(n int, unit string) string {
		if n == 1 {
			return "1 " + unit
		}
		return fmt.Sprintf("%d %ss", n, unit)
	}
	switch {
	case days == 0 && hours == 0:
		return "less than an hour"
	case days == 0:
		return plural(hours, "hour")
	case hours == 0:
		return plural(days, "day")
	}
	return plural(days, "day") + " " + plural(hours, "hour")
}

// wildcardResources lists the resources of a set, other than column, that
// match more than one name: * or ? in a value, no value at all, or an
// excludes list.
func wildcardResources(res map[string]ranger.RangerPolicyResource) []string {
	var out []string
	for _, name := range sortedResNames(res) {
		if name == "column" {
			continue
		}
		r := res[name]
		wild := r.IsExcludes || len(r.Values) == 0
		for _, v := range r.Values {
			if v == "" || strings.ContainsAny(v, "*?") {
				wild = true
			}
		}
		if wild {
			out = append(out, name)
		}
	}
	return out
}

// resourceOrder puts hive's resources in hierarchy order.
var resourceOrder = map[string]int{"database": 0, "url": 0, "hiveservice": 0, "global": 0, "table": 1, "udf": 1, "column": 2}

func sortedResNames(res map[string]ranger.RangerPolicyResource) []string {
	names := make([]string, 0, len(res))
	for n := range res {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		oi, iok := resourceOrder[names[i]]
		oj, jok := resourceOrder[names[j]]
		if iok && jok && oi != oj {
			return oi < oj
		}
		if iok != jok {
			return iok
		}
		return names[i] < names[j]
	})
	return names
}

func describeResource(res map[string]ranger.RangerPolicyResource) string {
	var parts []string
	for _, name := range sortedResNames(res) {
		r := res[name]
		v := strings.Join(r.Values, ",")
		if len(r.Values) == 0 {
			v = "(any)"
		}
		if r.IsExcludes {
			v = "not " + v
		}
		parts = append(parts, name+"="+v)
	}
	return strings.Join(parts, ", ")
}

func accessList(as []ranger.RangerPolicyItemAccess) string {
	var names []string
	for _, a := range as {
		if a.IsAllowed {
			names = append(names, a.Type)
		}
	}
	return strings.Join(names, ",")
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
