package policy

import (
	"strings"

	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/rangerexpr"
)

// Conditions and pgranger's fail-closed rule.
//
// Ranger evaluates item and policy conditions with Java classes named in
// the service-def's policyConditions; a condition whose type has no
// conditionDef is skipped, i.e. treated as true. pgranger cannot run Java,
// so it implements a fixed set of evaluators (below) and treats every other
// condition, including one with no conditionDef, as unknown. A script that
// does not parse, fails or exceeds its budget is unknown too (Ranger logs
// the error and takes the script as false).
// An unknown condition never lets an item grant anything: it never matches
// as an allow item, a deny exception, a mask item (MASK_NONE exemptions
// included) or a row-filter item, and it always matches as a deny item or
// an allow exception. This deliberately differs from Ranger, which ignores
// conditions it does not know.
//
// Implemented evaluators:
//   - RangerScriptConditionEvaluator and RangerScriptTemplateConditionEvaluator,
//     for scripts in Ranger's expression language as package rangerexpr
//     evaluates it (macros, USER / UG / TAGS / REQ …, ctx methods, if /
//     else, ctx.result = …). A script outside the language is unknown.
//   - RangerContextAttributeValueInCondition,
//     RangerContextAttributeValueNotInCondition and the sample
//     RangerSimpleMatcher / RangerSampleSimpleMatcher (condeval.go).
//   - RangerHiveResourcesAccessedTogetherCondition and
//     RangerHiveResourcesNotAccessedTogetherCondition, over the request's
//     REQUESTED_RESOURCES (condeval.go).
//   - RangerAnyOfExpectedTagsPresentConditionEvaluator,
//     RangerNoneOfExpectedTagsPresentConditionEvaluator,
//     RangerTagsAllPresentConditionEvaluator.

type condResult int

const (
	condTrue condResult = iota
	condFalse
	condUnknown
)

type condKind int

const (
	condUnknownKind condKind = iota
	condScript
	condAnyTag
	condNoneTag
	condAllTags
	condConstTrue
	condContextIn
	condContextNotIn
	condAccessedTogether
	condNotAccessedTogether
	condContextMatch
)

type condition struct {
	typ     string
	kind    condKind
	script  *rangerexpr.Program
	reverse bool // script template with an expected value of "no"/"false"
	tags    []string
	values  []string            // context-attribute conditions: the condition's values
	attr    string              // context-attribute conditions: evaluatorOptions attributeName
	mutex   []*policyResMatcher // accessed-together conditions: one per resource spec
}

func compileConditions(sd *serviceDef, conds []ranger.RangerPolicyItemCondition) (out []*condition, anyUnknown bool) {
	for _, c := range conds {
		cond := compileCondition(sd, c)
		if cond.kind == condUnknownKind {
			anyUnknown = true
		}
		out = append(out, cond)
	}
	return out, anyUnknown
}

func compileCondition(sd *serviceDef, c ranger.RangerPolicyItemCondition) *condition {
	cond := &condition{typ: c.Type}
	def := sd.condDefs[c.Type]
	if def == nil {
		return cond
	}
	first := ""
	if len(c.Values) > 0 {
		first = strings.TrimSpace(c.Values[0])
	}
	ev := def.Evaluator
	switch {
	case strings.HasSuffix(ev, ".RangerScriptTemplateConditionEvaluator"):
		if first == "" {
			cond.kind = condConstTrue // no expected value: Ranger runs no script
			return cond
		}
		cond.reverse = strings.EqualFold(first, "false") || strings.EqualFold(first, "no")
		tmpl := strings.TrimSpace(def.EvaluatorOptions["scriptTemplate"])
		if tmpl == "" {
			cond.kind = condConstTrue
			return cond
		}
		if s, err := rangerexpr.ParseScript(tmpl); err == nil {
			cond.kind, cond.script = condScript, s
		}
	case strings.HasSuffix(ev, ".RangerScriptConditionEvaluator"):
		if first == "" {
			cond.kind = condConstTrue // Ranger logs "script is empty" and passes
			return cond
		}
		if s, err := rangerexpr.ParseScript(first); err == nil {
			cond.kind, cond.script = condScript, s
		}
	case strings.HasSuffix(ev, ".RangerContextAttributeValueInCondition"),
		strings.HasSuffix(ev, ".RangerContextAttributeValueNotInCondition"),
		strings.HasSuffix(ev, ".RangerHiveResourcesAccessedTogetherCondition"),
		strings.HasSuffix(ev, ".RangerHiveResourcesNotAccessedTogetherCondition"),
		strings.HasSuffix(ev, ".RangerSimpleMatcher"), strings.HasSuffix(ev, ".RangerSampleSimpleMatcher"):
		compileRequestCondition(sd, def, c, cond)
	case strings.HasSuffix(ev, ".RangerAnyOfExpectedTagsPresentConditionEvaluator"):
		cond.kind, cond.tags = condAnyTag, trimAll(c.Values)
	case strings.HasSuffix(ev, ".RangerNoneOfExpectedTagsPresentConditionEvaluator"):
		cond.kind, cond.tags = condNoneTag, trimAll(c.Values)
	case strings.HasSuffix(ev, ".RangerTagsAllPresentConditionEvaluator"):
		cond.kind, cond.tags = condAllTags, trimAll(c.Values)
	}
	return cond
}

func trimAll(vs []string) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, strings.TrimSpace(v))
	}
	return out
}

// evalConditions: any false condition makes the item (or policy) not
// match; otherwise an unknown one makes the outcome unknown.
func evalConditions(conds []*condition, rq *evalReq) condResult {
	res := condTrue
	for _, c := range conds {
		switch c.eval(rq) {
		case condFalse:
			return condFalse
		case condUnknown:
			res = condUnknown
		}
	}
	return res
}

func (c *condition) eval(rq *evalReq) condResult {
	switch c.kind {
	case condConstTrue:
		return condTrue
	case condScript:
		v, err := c.script.Condition(rq.exprEnv())
		if err != nil {
			return condUnknown // fail closed: never grants, always denies
		}
		if c.reverse {
			v = !v
		}
		return boolResult(v)
	case condContextIn, condContextNotIn, condContextMatch, condAccessedTogether, condNotAccessedTogether:
		return c.evalRequest(rq)
	case condAnyTag:
		for _, t := range rq.tags {
			if containsStr(c.tags, t.typ) {
				return condTrue
			}
		}
		return condFalse
	case condNoneTag:
		for _, t := range rq.tags {
			if containsStr(c.tags, t.typ) {
				return condFalse
			}
		}
		return condTrue
	case condAllTags:
		if len(c.tags) == 0 {
			return condTrue
		}
		for _, want := range c.tags {
			found := false
			for _, t := range rq.tags {
				if t.typ == want {
					found = true
					break
				}
			}
			if !found {
				return condFalse
			}
		}
		return condTrue
	}
	return condUnknown
}

func boolResult(b bool) condResult {
	if b {
		return condTrue
	}
	return condFalse
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
