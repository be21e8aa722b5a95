package sqlrewrite

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// Session settings are an allow list (docs/security.md "Session settings",
// "Allowed settings"). A backend session's settings decide more than
// formats: debug_print_plan, debug_print_parse/_rewritten and trace_*
// write plans (with estimates from statistics of whole tables), rewritten
// statements (with mask and row-filter text) and sort sizes as LOG
// messages, client_min_messages decides whether those reach the client,
// and planner settings (enable_*, *_cost, geqo*, the collapse limits,
// plan_cache_mode, debug_parallel_query, work_mem) choose the plan and so
// the order in which quals meet a barrier. A deny list misses whatever
// PostgreSQL or an extension adds next, so a setting is refused (42501)
// unless it is in builtinSettings below or the operator names it in
// policy.allowed-settings. This fails closed for every setting not
// named here: planner and cost settings, debug_*, trace_*, log_*,
// session_replication_role, work_mem, jit, max_parallel_workers_per_gather,
// lc_messages and the other lc_* (superuser-only or not needed by
// clients), seed (SET SEED makes random() repeatable), settings of a
// future PostgreSQL, extensions' settings and custom placeholders (names
// with a dot: pgranger cannot tell myapp.x from auto_explain.x or
// pg_hint_plan.x). The same list applies to SET, SET LOCAL, RESET, SET …
// TO DEFAULT, set_config and the startup packet (pgwire), for every
// session: Ranger super users too, because settings act on the backend
// session, not on Ranger's decisions.

// settingRule says which changes of a setting the list allows.
type settingRule int

const (
	// anyValue: any value, DEFAULT and RESET. (A setting not on the list
	// may only be RESET or SET … TO DEFAULT.)
	anyValue settingRule = iota
	// someValues: the values of the group (compared lower-cased), DEFAULT
	// and RESET (the server's default; pgwire drops LOG and DEBUG
	// messages whatever it is).
	someValues
	// sessionValue: SET to the value pgranger's backend sessions run with
	// (it changes nothing); DEFAULT, RESET, FROM CURRENT and set_config
	// are refused, as is every operator entry (config refuses them).
	sessionValue
	// trackedPath: search_path, which set.go and setconfig.go check and
	// track.
	trackedPath
	// never: refused in every form.
	never
)

// settingGroup is one row of the list: settings allowed for one reason.
type settingGroup struct {
	names  []string // as PostgreSQL spells them; compared case-insensitively
	rule   settingRule
	values []string // someValues, sessionValue: what a value may be, folded
	allows string   // the values allowed, as docs/security.md words them
	why    string   // why it is safe and who sets it (docs/security.md)
}

// builtinSettings is the list; docs/security.md "Allowed settings" shows
// it (TestAllowedSettingsDocumented keeps the two equal).
var builtinSettings = []settingGroup{
	{
		names:  []string{"DateStyle", "IntervalStyle", "TimeZone", "extra_float_digits", "bytea_output", "xmloption"},
		rule:   anyValue,
		allows: "any",
		why: "how values are written as text and text is read as values, not which rows or columns a statement may read (policy expressions follow them too: Formats apply inside policy expressions, above). " +
			"pgjdbc sends DateStyle, TimeZone and extra_float_digits at startup, psycopg2 `SET DATESTYLE`, pg_dump DateStyle, IntervalStyle and extra_float_digits, BI tools `SET TIME ZONE`",
	},
	{
		names:  []string{"application_name"},
		rule:   anyValue,
		allows: "any",
		why:    "names the session in `pg_stat_activity` (denied to users) and the server log; psql, pgjdbc and node-postgres send it",
	},
	{
		names:  []string{"search_path"},
		rule:   trackedPath,
		allows: "schemas, `pg_catalog` first or not named; not SET LOCAL",
		why:    "pgranger resolves names with its own copy of the path, so the backend cannot resolve one to another relation (Name resolution above); JDBC's `currentSchema` and `setSchema`, pg_dump",
	},
	{
		names:  []string{"client_min_messages"},
		rule:   someValues,
		values: []string{"info", "notice", "warning", "error"},
		allows: "`info`, `notice`, `warning`, `error`",
		why:    "`log` and `debug1`–`debug5` would send the backend's LOG and DEBUG messages to the client (the relay drops them anyway); dump scripts set `warning`",
	},
	{
		names:  []string{"statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout", "idle_session_timeout", "transaction_timeout"},
		rule:   anyValue,
		allows: "any",
		why:    "end the user's own statement, transaction or session; node-postgres sends the first three at startup, pg_dump sets them to 0",
	},
	{
		names: []string{"transaction_isolation", "transaction_read_only", "transaction_deferrable",
			"default_transaction_isolation", "default_transaction_read_only", "default_transaction_deferrable", "synchronous_commit"},
		rule:   anyValue,
		allows: "any",
		why: "isolation, read-only and when a commit is reported; what a statement may read is checked the same in every snapshot. " +
			"`SET TRANSACTION …` and `SET SESSION CHARACTERISTICS AS TRANSACTION …` set these (pgjdbc's `setTransactionIsolation` and `setReadOnly`, pg_dump's `REPEATABLE READ, READ ONLY`), psycopg2 sets `default_transaction_*` in autocommit; `SET TRANSACTION SNAPSHOT` (pg_dump `-j`) is allowed with them",
	},
	{
		names:  []string{"row_security", "synchronize_seqscans", "restrict_nonsystem_relation_kind", "quote_all_identifiers"},
		rule:   anyValue,
		allows: "any",
		why: "pg_dump sets them: `row_security = off` only turns a read that PostgreSQL's own row-level security would filter into an error, " +
			"synchronize_seqscans moves where a sequential scan starts (row order, not which rows), restrict_nonsystem_relation_kind can only forbid, quote_all_identifiers changes how definitions are printed",
	},
	{
		names:  []string{"check_function_bodies", "default_tablespace", "default_table_access_method", "escape_string_warning"},
		rule:   anyValue,
		allows: "any",
		why: "dump scripts restored through pgranger set them: CREATE FUNCTION is refused anyway, the defaults are what CREATE TABLE's TABLESPACE and USING clauses name (with `policy.allow-ddl`, PostgreSQL checks the service role's privileges), " +
			"escape_string_warning decides a warning",
	},
	{
		names:  []string{"client_encoding"},
		rule:   sessionValue,
		values: []string{"utf8", "unicode"},
		allows: "`UTF8` only, with SET (also `SET NAMES`)",
		why:    "the parser assumes UTF8; SET to the value sessions run with changes nothing (pg_dump's parallel workers, psql running a dump)",
	},
	{
		names:  []string{"standard_conforming_strings"},
		rule:   sessionValue,
		values: []string{"on", "true"},
		allows: "`on` only, with SET",
		why:    "the parser assumes it, and reads string literals by it; a dump script sets it on",
	},
	{
		names:  []string{"role", "session_authorization"},
		rule:   never,
		allows: "never",
		why:    "they would change whose privileges the backend applies",
	},
}

// settingsList is builtinSettings with the operator's additions
// (policy.allowed-settings): exact names and "<prefix>.*" for a family of
// custom placeholders. An addition never changes a built-in rule.
type settingsList struct {
	builtin  map[string]*settingGroup // lower-case name → its group
	extra    map[string]bool          // lower-case names
	prefixes []string                 // lower-case, each ending in "."
}

// operatorSetting is the rule of a setting the operator allowed.
var operatorSetting = &settingGroup{rule: anyValue}

func newSettingsList(allowed []string) *settingsList {
	l := &settingsList{builtin: map[string]*settingGroup{}, extra: map[string]bool{}}
	for i := range builtinSettings {
		for _, n := range builtinSettings[i].names {
			l.builtin[strings.ToLower(n)] = &builtinSettings[i]
		}
	}
	for _, a := range allowed {
		a = strings.ToLower(strings.TrimSpace(a))
		if prefix, ok := strings.CutSuffix(a, ".*"); ok && prefix != "" {
			l.prefixes = append(l.prefixes, prefix+".")
		} else if a != "" && !strings.Contains(a, "*") {
			l.extra[a] = true
		}
	}
	return l
}

// lookup returns the rule of name (lower-case), nil when it is not on the
// list.
func (l *settingsList) lookup(name string) *settingGroup {
	if g := l.builtin[name]; g != nil {
		return g
	}
	if l.extra[name] {
		return operatorSetting
	}
	for _, p := range l.prefixes {
		if strings.HasPrefix(name, p) && len(name) > len(p) {
			return operatorSetting
		}
	}
	return nil
}

// FixedSettings are the settings whose rules policy.allowed-settings
// cannot change (config refuses them there; cmd/proxy's test keeps the
// two lists equal).
func FixedSettings() []string {
	var out []string
	for _, g := range builtinSettings {
		if g.rule != anyValue {
			for _, n := range g.names {
				out = append(out, strings.ToLower(n))
			}
		}
	}
	return out
}

// settingChange is one change a client asks for.
type settingChange struct {
	name      string // lower-case
	value     string // the value, when it is one constant (settingValue)
	known     bool   // value is set
	reset     bool   // DEFAULT, RESET, FROM CURRENT: no value of the client's
	setConfig bool   // through set_config, which may run anywhere in a query
	user      string // the authenticated user, for messages
}

// check decides a change: nil when the list allows it. trackedPath
// passes here; its callers check the path itself.
func (l *settingsList) check(c settingChange) *Error {
	g := l.lookup(c.name)
	switch {
	case g == nil && c.reset:
		// RESET and SET … TO DEFAULT of a setting not on the list: back
		// to the value the session started with (the server's and the
		// operator's, as RESET ALL does), nothing a client chose.
	case g == nil:
		e := denyf("setting %s cannot be changed through pgranger (user %q)", c.name, c.user)
		e.Hint = "An operator can allow it with policy.allowed-settings."
		return e
	case g.rule == never || g.rule == sessionValue && c.setConfig:
		if c.setConfig {
			return denyf("set_config on %s is not allowed through pgranger; use SET (user %q)", c.name, c.user)
		}
		return denyf("setting %s cannot be changed through pgranger (user %q)", c.name, c.user)
	case g.rule == sessionValue:
		if c.reset || !c.known || !g.allowsValue(c.name, c.value) {
			return denyf("setting %s cannot be changed through pgranger (user %q)", c.name, c.user)
		}
	case g.rule == someValues:
		switch {
		case c.reset:
		case !c.known:
			e := denyf("setting %s can only be set to one constant value through pgranger (user %q)", c.name, c.user)
			e.Hint = "Allowed values: " + strings.Join(g.values, ", ") + "."
			return e
		case !g.allowsValue(c.name, c.value):
			e := denyf("setting %s cannot be set to %s through pgranger (user %q)", c.name, QuoteLiteral(c.value), c.user)
			e.Hint = "Allowed values: " + strings.Join(g.values, ", ") + "."
			return e
		}
	}
	return nil
}

// allowsValue reports whether v is one of the group's values, compared as
// PostgreSQL compares them: enum and boolean names case-insensitively,
// encoding names also ignoring everything but letters and digits
// (clean_encoding_name), so "utf-8" is UTF8.
func (g *settingGroup) allowsValue(name, v string) bool {
	v = strings.ToLower(v)
	if name == "client_encoding" {
		v = strings.Map(func(c rune) rune {
			if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
				return c
			}
			return -1
		}, v)
	}
	for _, ok := range g.values {
		if v == ok {
			return true
		}
	}
	return false
}

// settingValue is the text of a constant value of SET or set_config, as
// PostgreSQL reads it for a setting: a string, a number as written, a
// boolean. Anything else (an expression, a typed literal) is not read.
func settingValue(n *pg.Node) (string, bool) {
	c := n.GetAConst()
	switch {
	case c == nil || c.Isnull:
		return "", false
	case c.GetSval() != nil:
		return c.GetSval().Sval, true
	case c.GetIval() != nil:
		return strconv.FormatInt(int64(c.GetIval().Ival), 10), true
	case c.GetFval() != nil:
		return c.GetFval().Fval, true
	case c.GetBoolval() != nil:
		return strconv.FormatBool(c.GetBoolval().Boolval), true
	}
	return "", false
}

// CheckStartupSetting decides a setting of user's startup packet (a
// parameter, or "-c name=value" in options) under the list SET follows;
// value is the setting's raw text. search_path passes here: pgwire sets it
// through the rewriter, which checks and tracks it.
func (rw *Rewriter) CheckStartupSetting(user, name, value string) *Error {
	return rw.settings.check(settingChange{name: strings.ToLower(name), value: value, known: true, user: user})
}
