package ranger

import (
	"fmt"
	"sort"
	"strings"
)

// ResourceSignature is what Ranger Admin keeps unique among the enabled
// policies of a service (RangerPolicyResourceSignature): the policy type,
// its resources with their excludes and recursive flags, the additional
// resources, the validity schedules, a priority other than normal, the
// zone and the policy conditions. Two enabled policies with one signature
// are refused with error 3010; a grant merges into the policy whose
// signature equals its own (ExactMatch). Value lists compare as sets.
func ResourceSignature(p *RangerPolicy) string {
	var b strings.Builder
	fmt.Fprintf(&b, "type=%d;", p.PolicyType)
	if p.PolicyPriority != PolicyPriorityNormal {
		fmt.Fprintf(&b, "priority=%d;", p.PolicyPriority)
	}
	if p.ZoneName != "" {
		fmt.Fprintf(&b, "zone=%q;", p.ZoneName)
	}
	writeResources(&b, p.Resources)
	for _, extra := range p.AdditionalResources {
		b.WriteString("+")
		writeResources(&b, extra)
	}
	for _, vs := range p.ValiditySchedules {
		fmt.Fprintf(&b, "schedule=%q,%q,%q,%d;", vs.StartTime, vs.EndTime, vs.TimeZone, len(vs.Recurrences))
		for _, r := range vs.Recurrences {
			fmt.Fprintf(&b, "r=%q,%q,%q,%q,%q,%q,%d,%d,%d;", r.Schedule.Minute, r.Schedule.Hour, r.Schedule.DayOfMonth,
				r.Schedule.DayOfWeek, r.Schedule.Month, r.Schedule.Year, r.Interval.Days, r.Interval.Hours, r.Interval.Minutes)
		}
	}
	for _, c := range p.Conditions {
		fmt.Fprintf(&b, "cond=%q:%q;", c.Type, sortedCopy(c.Values))
	}
	return b.String()
}

func writeResources(b *strings.Builder, res map[string]RangerPolicyResource) {
	names := make([]string, 0, len(res))
	for n := range res {
		names = append(names, n)
	}
	sort.Strings(names)
	b.WriteString("{")
	for _, n := range names {
		r := res[n]
		fmt.Fprintf(b, "%q=%q,excl=%t,rec=%t;", n, sortedCopy(r.Values), r.IsExcludes, r.IsRecursive)
	}
	b.WriteString("}")
}

func sortedCopy(vs []string) []string {
	out := append([]string(nil), vs...)
	sort.Strings(out)
	return out
}

// PolicyByName returns the policy named name in sp (nil when none).
func (sp *ServicePolicies) PolicyByName(name string) *RangerPolicy {
	for i := range sp.Policies {
		if sp.Policies[i].Name == name {
			return &sp.Policies[i]
		}
	}
	return nil
}

// ConflictFor returns the enabled policy other than p (by name) whose
// signature equals p's: Ranger's error 3010. nil when none, or when p is
// disabled (a disabled policy conflicts with nothing).
func (sp *ServicePolicies) ConflictFor(p *RangerPolicy) *RangerPolicy {
	if !p.IsEnabled {
		return nil
	}
	sig := ResourceSignature(p)
	for i := range sp.Policies {
		q := &sp.Policies[i]
		if q.Name != p.Name && q.IsEnabled && ResourceSignature(q) == sig {
			return q
		}
	}
	return nil
}
