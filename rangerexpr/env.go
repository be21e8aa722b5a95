// Package rangerexpr is Ranger's expression language as pgranger
// evaluates it: the ${{…}} expressions of row filters and CUSTOM masks
// and the scripts of script conditions (RangerScriptConditionEvaluator,
// RangerScriptTemplateConditionEvaluator).
//
// Ranger expands its macros (GET_USER_ATTR → ctx.userAttr, …) and runs
// the result as JavaScript (RangerRequestScriptEvaluator). pgranger
// embeds no script engine: it parses the forms Ranger's macros and
// variables produce — a small, side-effect-free subset of JavaScript
// (literals, USER / UGNAMES / URNAMES / UG / UGA, TAGS / TAGNAMES / TAG,
// REQ / RES, the ctx methods behind the macros, . and [] access, a few
// string and array methods, ! && || ?: == != === !== < > <= >= + - * / %,
// Ranger's [[x]] / [[x,'sep']] split shorthand and, in scripts, if / else,
// blocks, var / let / const and ctx.result = …) — and evaluates it against
// an Env. There are no loops, no functions, no host objects and no I/O; a
// step budget bounds every evaluation and a size limit every string.
//
// The package knows nothing of SQL: where a value lands in a statement
// and how it is quoted is the caller's (sqlrewrite).
package rangerexpr

import (
	"errors"
	"maps"
	"slices"
	"time"
)

// Env is what an expression is evaluated against: what Ranger's script
// context (RangerRequestScriptEvaluator) offers.
type Env struct {
	User       string
	Attrs      map[string]string            // USER: user store + identity attributes, plus _name
	Groups     []string                     // UGNAMES: sorted, unique
	GroupAttrs map[string]map[string]string // UG: per group, plus _name
	Roles      []string                     // URNAMES: sorted, unique

	// Resource is the request's resource (RES, REQ.resource): database,
	// table, column (masks only) and _ownerUser (when the owner is known).
	Resource map[string]string
	What     string // the resource for messages: "table sales.orders", "column sales.orders.ssn"
	// Tags are the resource's tags in stored order (TAGS, TAGNAMES, the
	// tag macros); Tag is the current tag (TAG): the tag of the tag policy
	// the expression belongs to, nil for a resource policy.
	Tags []Tag
	Tag  *Tag

	// Request is set when a condition is evaluated for one access
	// request; nil for row filters and masks, whose rewrite is cached per
	// statement and identity. Only with a Request do the client's
	// address, the access time and the request context exist, and an
	// absent attribute is plain undefined (as in Ranger) rather than an
	// error.
	Request *Request

	// Budget is the most evaluation steps one run may take (0:
	// DefaultBudget). Exceeding it is ErrBudget.
	Budget int
}

// Request is what a condition script sees of the access request.
type Request struct {
	AccessType string
	Action     string
	ClientIP   string
	SessionID  string
	AccessTime time.Time
	Context    map[string]string // request context attributes (ctx.getRequestContextAttribute, REQ.context)
	// TimeZone resolves a time-zone id of IS_ACCESS_TIME_…; nil:
	// time.LoadLocation, UTC when unknown.
	TimeZone func(id string) *time.Location
}

// Tag is a tag of the requested resource (Ranger's RangerTagForEval).
type Tag struct {
	Type       string
	Attributes map[string]string
	MatchType  string
}

const (
	// DefaultBudget bounds one evaluation. An expression of the largest
	// accepted size (maxExprTokens) cannot need more than about twice
	// its tokens, and scripts Ranger ships need a few dozen.
	DefaultBudget = 2048
	maxStringLen  = 1 << 16
)

// ErrBudget is returned when an evaluation exceeds its step budget or a
// string its size limit.
var ErrBudget = errors.New("the expression exceeds its evaluation budget")

// sortedUnique: in's distinct values, sorted (a new slice).
func sortedUnique(in []string) []string { return slices.Compact(slices.Sorted(slices.Values(in))) }

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
