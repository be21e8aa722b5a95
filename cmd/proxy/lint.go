package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
)

// `pgranger lint POLICIES.json` checks a ServicePolicies document for the
// mistakes DESIGN §8 names, one line per finding:
//
//	error: policy <id> "<name>": <finding>
//	warning: policy <id> "<name>": <finding>
//
// Errors change what users get in a way nobody meant; warnings are
// housekeeping. Rules:
//   - error: an allow item of an access policy grants the group public (or
//     the user {USER}, which is every user too) on a wildcard resource: a
//     value with * or ?, an empty value list, or an excludes list, on any
//     resource but column (all columns of one named table is an ordinary
//     grant);
//   - error: a data-mask item whose mask type the serviceDef's dataMaskDef
//     does not declare (MASK_NONE, MASK_NULL and CUSTOM are Ranger's own
//     and always valid; tag policies' "hive:" prefix is stripped, another
//     component's prefix is reported);
//   - warning: no owner label: policyLabels is empty;
//   - warning: an excludes resource (isExcludes) without a description
//     saying why;
//   - warning: a validity schedule whose end is past.
//
// Exit status: 0 no errors (warnings are printed but pass), 1 errors — or
// warnings with --strict —, 2 usage or an unreadable file.

func lintCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lint", flag.ContinueOnError)
	fs.SetOutput(stderr)
	atFlag := fs.String("at", "", "the time schedules are judged at, RFC 3339 (default: now)")
	strict := fs.Bool("strict", false, "exit 1 on warnings too, not only on errors")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: pgranger lint [--strict] [--at TIME] POLICIES.json...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	at := time.Now()
	if *atFlag != "" {
		t, err := time.Parse(time.RFC3339, *atFlag)
		if err != nil {
			fmt.Fprintf(stderr, "pgranger lint: --at: %v\n", err)
			return 2
		}
		at = t
	}
	errs, warns := 0, 0
	for _, file := range fs.Args() {
		data, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintf(stderr, "pgranger lint: %v\n", err)
			return 2
		}
		sp, err := ranger.ParseServicePolicies(data)
		if err != nil {
			fmt.Fprintf(stderr, "pgranger lint: %s: %v\n", file, err)
			return 2
		}
		prefix := ""
		if fs.NArg() > 1 {
			prefix = file + ": "
		}
		for _, f := range lintPolicies(sp, at) {
			fmt.Fprintf(stdout, "%s%s: %s\n", prefix, f.severity, f.text)
			if f.severity == lintError {
				errs++
			} else {
				warns++
			}
		}
	}
	if errs+warns > 0 {
		fmt.Fprintf(stderr, "pgranger lint: %d error(s), %d warning(s)\n", errs, warns)
	}
	if errs > 0 || (*strict && warns > 0) {
		return 1
	}
	return 0
}

const (
	lintError   = "error"
	lintWarning = "warning"
)

// lintFinding is one line of lint's report.
type lintFinding struct {
	severity string // lintError or lintWarning
	text     string // policy <id> "<name>": <finding>
}

// lintPolicies returns the findings for the resource policies, then the
// tag policies, in document order.
func lintPolicies(sp *ranger.ServicePolicies, at time.Time) []lintFinding {
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
	var out []lintFinding
	lint := func(p *ranger.RangerPolicy, tagPolicy bool) {
		report := func(severity, format string, args ...any) {
			out = append(out, lintFinding{severity, fmt.Sprintf("policy %d %q: %s", p.ID, p.Name, fmt.Sprintf(format, args...))})
		}
		fail := func(format string, args ...any) { report(lintError, format, args...) }
		warn := func(format string, args ...any) { report(lintWarning, format, args...) }
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
					fail("grants %s %s on wildcard resource %s", strings.Join(who, " and "), accessList(it.Accesses), describeResource(res))
				}
			}
		}
		// Owner labels.
		if len(p.PolicyLabels) == 0 {
			warn("has no owner label (policyLabels is empty)")
		}
		// Excludes without a description.
		if strings.TrimSpace(p.Description) == "" {
			for _, res := range sets {
				for _, name := range sortedResNames(res) {
					if r := res[name]; r.IsExcludes {
						warn("excludes %s=%s but has no description saying why", name, strings.Join(r.Values, ","))
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
					warn("validity schedule ended %s %s", strings.TrimSpace(vs.EndTime), tz)
				}
			}
			if expired == n {
				warn("every validity schedule has ended: the policy never applies")
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
						fail("mask item %d: mask type %q is for another component than %s", i+1, typ, def.Name)
						continue
					}
				}
				if declared[typ] {
					continue
				}
				if name, ok := folded[strings.ToLower(typ)]; ok {
					fail("mask item %d: mask type %q is declared as %q (Ranger compares mask type names exactly)", i+1, typ, name)
					continue
				}
				fail("mask item %d: mask type %q is not declared in the serviceDef's dataMaskDef", i+1, typ)
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
