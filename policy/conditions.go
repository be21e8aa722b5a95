package policy

import (
	"strings"
	"time"

	"github.com/pgranger/pgranger/ranger"
)

// Conditions and pgranger's fail-closed rule.
//
// Ranger evaluates item and policy conditions with Java classes named in
// the service-def's policyConditions; a condition whose type has no
// conditionDef is skipped, i.e. treated as true. pgranger cannot run Java or
// JavaScript, so it implements a fixed set of evaluators (below) and treats
// every other condition, including one with no conditionDef, as unknown.
// An unknown condition never lets an item grant anything: it never matches
// as an allow item, a deny exception, a mask item (MASK_NONE exemptions
// included) or a row-filter item, and it always matches as a deny item or
// an allow exception. This deliberately differs from Ranger, which ignores
// conditions it does not know.
//
// Implemented evaluators:
//   - RangerScriptConditionEvaluator and RangerScriptTemplateConditionEvaluator,
//     for scripts in the subset parsed by expr.go (boolean combinations of
//     Ranger's macros and ctx methods such as IS_IN_ROLE('r'),
//     ctx.isAccessedBefore('expiry'), optionally wrapped in
//     "if (...) ctx.result = true;"). A script outside the subset is unknown.
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
)

type condition struct {
	typ     string
	kind    condKind
	script  *script
	reverse bool // script template with an expected value of "no"/"false"
	tags    []string
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
		if s, err := parseScript(tmpl); err == nil {
			cond.kind, cond.script = condScript, s
		}
	case strings.HasSuffix(ev, ".RangerScriptConditionEvaluator"):
		if first == "" {
			cond.kind = condConstTrue // Ranger logs "script is empty" and passes
			return cond
		}
		if s, err := parseScript(first); err == nil {
			cond.kind, cond.script = condScript, s
		}
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
		v := c.script.run(rq)
		if c.reverse {
			v = !v
		}
		return boolResult(v)
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

// parseTagDate reads a tag attribute date the way RangerRequestScriptEvaluator
// does: "yyyy/MM/dd" or Atlas's "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", each
// matched from the start of the text (SimpleDateFormat ignores what
// follows), read as a UTC wall-clock time.
func parseTagDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, ok := parseSlashDate(s); ok {
		return t, true
	}
	if len(s) >= 24 {
		if t, err := time.Parse("2006-01-02T15:04:05.000Z", s[:24]); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func parseSlashDate(s string) (time.Time, bool) {
	nums := [3]int{}
	pos := 0
	for field := 0; field < 3; field++ {
		start := pos
		for pos < len(s) && s[pos] >= '0' && s[pos] <= '9' {
			nums[field] = nums[field]*10 + int(s[pos]-'0')
			pos++
			if pos-start > 9 {
				return time.Time{}, false
			}
		}
		if pos == start {
			return time.Time{}, false
		}
		if field < 2 {
			if pos >= len(s) || s[pos] != '/' {
				return time.Time{}, false
			}
			pos++
		}
	}
	y, m, d := nums[0], nums[1], nums[2]
	if m < 1 || m > 12 || d < 1 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d { // non-lenient: 2024/02/30 is rejected
		return time.Time{}, false
	}
	return t, true
}
