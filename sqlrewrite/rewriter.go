// Package sqlrewrite decides, for one identity, what a SQL text may do and
// what it must become before it reaches PostgreSQL.
//
// Every statement is parsed with PostgreSQL's own parser (pg_query). Each
// reference to a governed relation is resolved through the catalog with the
// session's search_path, checked against Ranger access policies column by
// column, and — when a mask, a row filter or a restricted column applies —
// replaced by a wrapper subquery with the same visible name and columns:
//
//	SELECT id, ssn FROM sales.orders o
//	→ SELECT id, ssn FROM (SELECT id, <mask(ssn)> AS ssn, … FROM sales.orders WHERE <filter>) o
//
// A statement kind the rewriter does not know is denied; nothing that was
// not understood is forwarded (docs/security.md, "Mechanisms": Fail
// closed; docs/architecture.md, "The path of one statement"). Results are cached by statement
// text, identity, policy generation, catalog version and search_path, so the
// parser runs once per distinct text.
package sqlrewrite

import (
	"context"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/maypok86/otter/v2"
	"github.com/maypok86/otter/v2/stats"

	"github.com/pgranger/pgranger/audit"
	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/sqlstate"
)

// Options are the rewriter's fixed settings.
type Options struct {
	MaxStatementBytes int
	MaxNestingDepth   int
	// CacheBytes bounds the memory the rewrite caches hold (the texts,
	// keys and results they keep, estimated per entry): policy.
	// rewrite-cache-mb. Entries counted alone do not bound it — one
	// rewrite of a wide table with masks is tens of kilobytes. Default
	// 64 MiB; a quarter of it goes to literal templates.
	CacheBytes int64
	// NamespaceMapping is policy.namespace-mapping: "schema" maps a schema
	// to the Ranger database; "database.schema" maps "<db>.<schema>".
	NamespaceMapping string
	Mask             MaskOptions
	// KeepSessionFunctions leaves current_user & co. in user SQL as they
	// are (they then return the backend's service role). By default they
	// become the authenticated user's name.
	KeepSessionFunctions bool
	// DMLRowFilter is policy.dml-row-filter: "deny" (the default, Hive's
	// block-update rule) refuses INSERT, UPDATE, DELETE, MERGE and COPY
	// FROM on a table that has a row filter or a mask for the user;
	// "apply" writes through a security-barrier view with CHECK OPTION
	// instead, so UPDATE and DELETE reach only the rows the filter keeps
	// and INSERT and UPDATE must produce rows it keeps (dml.go).
	DMLRowFilter string
	// AllowDDL is policy.allow-ddl: CREATE TABLE [AS], ALTER TABLE, DROP,
	// TRUNCATE, CREATE INDEX and REFRESH MATERIALIZED VIEW with Ranger's
	// create/alter/drop/update/index/refresh access (ddl.go). Off: denied.
	AllowDDL bool
	// AllowedSettings is policy.allowed-settings: settings a session may
	// change besides pgranger's own list (settings.go), by name or as
	// "<prefix>.*" for custom placeholders.
	AllowedSettings []string
	// CacheStats counts hits and misses of the rewrite caches (read with
	// Rewriter.CacheStats), for pgranger_rewrite_cache_*_total. The
	// counters are built with the caches: otter takes its recorder only at
	// construction. Off, the one-shot CLI commands pay nothing for them.
	CacheStats bool
}

// DML row-filter modes (Options.DMLRowFilter).
const (
	DMLRowFilterDeny  = "deny"
	DMLRowFilterApply = "apply"
)

// PolicySource gives the policies in force (in the proxy,
// policystate.Holder); Snapshot must be cheap (it is called once per
// message) and safe for concurrent use.
type PolicySource interface {
	Snapshot() policy.Snapshot
}

// Env is the shared state a rewrite reads: immutable snapshots taken by the
// caller at the start of the statement.
type Env struct {
	Policy  policy.Snapshot
	Catalog *catalog.Snapshot
	// Refresh reloads the catalog when a name is missing; may be nil.
	Refresh func(ctx context.Context) (*catalog.Snapshot, error)
	Now     time.Time
	// ParamTypes are the types a client declared for $1…$n (Parse's
	// parameter OIDs; 0 = let the server infer). They decide how the
	// backend resolves operators on parameters, so they are part of the
	// cache key.
	ParamTypes []uint32
	// literalParams: $1…$n stand for the literals of a simple-protocol
	// statement (its literal template, template.go), which PostgreSQL
	// sees as constants, not as parameters.
	literalParams bool
}

// Session is the per-connection input of a rewrite.
type Session struct {
	Subject *policy.Subject
	// IdentityKey identifies Subject in cache keys; see IdentityKey.
	IdentityKey string
	Database    string
	// ClientAddr is the client's IP address, for policy conditions
	// (Ranger's clientIPAddress).
	ClientAddr        string
	SearchPath        []string
	DefaultSearchPath []string

	// prepared holds the statements prepared with SQL PREPARE
	// (prepare.go); created on first use. Rewrite updates it, so a
	// Session belongs to one connection.
	prepared *sqlPrepared
}

// NewSession builds the rewrite session of an authenticated identity.
func NewSession(user string, groups, roles []string, attrs map[string]string, database string) *Session {
	subj := &policy.Subject{User: user, Groups: groups, Roles: roles, Attributes: attrs}
	return &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: database}
}

// IdentityKey builds the cache identity of a subject: user, sorted roles,
// sorted groups and all attributes. Two sessions with equal keys get equal
// rewrites.
func IdentityKey(s *policy.Subject) string {
	var b strings.Builder
	b.WriteString(s.User)
	b.WriteByte(0)
	for _, r := range sortedUnique(s.Roles) {
		b.WriteString(r)
		b.WriteByte(1)
	}
	b.WriteByte(0)
	for _, g := range sortedUnique(s.Groups) {
		b.WriteString(g)
		b.WriteByte(1)
	}
	b.WriteByte(0)
	for _, k := range sortedKeys(s.Attributes) {
		b.WriteString(k)
		b.WriteByte(2)
		b.WriteString(s.Attributes[k])
		b.WriteByte(1)
	}
	return b.String()
}

// Result is the outcome for one SQL text (one or several statements).
type Result struct {
	// SQL is what to send to the backend: the original text when nothing
	// had to change, else the deparsed rewrite.
	SQL     string
	Changed bool
	// Err, when set, denies the whole text: nothing of it may run.
	Err        *Error
	Statements []StatementInfo
	// SearchPath, when not nil, is the session's search_path once the text
	// has run (it contained SET/RESET search_path or DISCARD ALL).
	SearchPath []string
	// Fingerprint identifies the statement's shape without its literals
	// (pg_query's fingerprint), for audit.
	Fingerprint string
	// Views must exist on the backend session before SQL is sent: the
	// security-barrier views of row-filtered relations (see View).
	Views []View
	// Authoring is the command tag (GRANT, REVOKE, CREATE POLICY, …) of a
	// text that is exactly one authoring statement (authoring.go). Err
	// then refuses it; a caller that writes such statements to Ranger
	// (pgwire with authoring.enabled) answers it instead, and nothing of
	// it reaches the backend either way.
	Authoring string
	// Audit is what the text's audit records say of its decisions, decided
	// with them under the same policy snapshot (audit.go).
	Audit audit.Decision

	// volatile: the result depends on, or changes, the session's SQL
	// prepared statements (prepare.go), so it is never cached.
	volatile bool
	// constDependent: the analysis looked at the value of a constant
	// (set_config's setting, is_role_in_session's role), so a template
	// with that constant replaced by a parameter says nothing about the
	// statement (template.go).
	constDependent bool
	// fromTemplate: SQL is a template's rewrite with the client's literals
	// put back as written (so "00" stays "00", where Deparse writes "0").
	fromTemplate bool
}

// StatementInfo describes one statement for audit and metrics.
type StatementInfo struct {
	Kind      StatementKind
	Governed  bool // it reads a relation Ranger governs
	Resources []ResourceUse
}

// ResourceUse is one governed relation a statement reads.
type ResourceUse struct {
	Database, Table string // Ranger resource
	Columns         []string
	Access          string
	PolicyIDs       []int64 // access decisions
	MaskPolicyIDs   []int64
	FilterPolicyIDs []int64
}

type cacheKey struct {
	// defaultPath is part of the key: RESET search_path, relations in
	// policy expressions and the qualification of catalog names follow it.
	sql, identity, database, searchPath, defaultPath string
	paramTypes                                       string
	policyGen, policyEpoch, catalogVersion           uint64
	// template: sql is a literal template (template.go) and the entry is
	// in Rewriter.templates.
	template bool
	// client is the client's address when policy conditions read the
	// request (a script, a context attribute): decisions may then differ
	// between clients of one identity. "" otherwise.
	client string
}

func newCacheKey(env *Env, sess *Session, sql string) cacheKey {
	return cacheKey{
		sql:            sql,
		identity:       sess.IdentityKey,
		database:       sess.Database,
		searchPath:     strings.Join(sess.SearchPath, "\x00"),
		defaultPath:    strings.Join(sess.DefaultSearchPath, "\x00"),
		paramTypes:     paramTypesKey(env.ParamTypes),
		policyGen:      env.Policy.Generation,
		policyEpoch:    policyEpoch(env),
		catalogVersion: env.Catalog.Version,
		client:         conditionClient(env, sess),
	}
}

func conditionClient(env *Env, sess *Session) string {
	if env.Policy.Engine != nil && env.Policy.Engine.ConditionsReadRequest() {
		return sess.ClientAddr
	}
	return ""
}

// paramTypesKey renders declared parameter types for a cache key ("" when
// none is declared, the common case).
func paramTypesKey(types []uint32) string {
	declared := false
	for _, t := range types {
		if t != 0 {
			declared = true
		}
	}
	if !declared {
		return ""
	}
	var b strings.Builder
	for _, t := range types {
		b.WriteString(strconv.FormatUint(uint64(t), 10))
		b.WriteByte(',')
	}
	return b.String()
}

// policyEpoch changes whenever a validity schedule may switch a decision
// (Engine.TimeEpoch); in the cache key it keeps a cached rewrite from
// outliving a schedule.
func policyEpoch(env *Env) uint64 {
	if env.Policy.Engine == nil {
		return 0
	}
	return env.Policy.Engine.TimeEpoch(env.Now)
}

// Rewriter is safe for concurrent use by all sessions.
type Rewriter struct {
	opts      Options
	settings  *settingsList // the settings sessions may change
	cache     *otter.Cache[cacheKey, *Result]
	templates *otter.Cache[cacheKey, *template]
	repeats   *doorkeeper // texts served by a template once: the second time, they go into cache
}

// New creates a Rewriter.
func New(opts Options) *Rewriter {
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = 64 << 20
	}
	if opts.MaxStatementBytes <= 0 {
		opts.MaxStatementBytes = 1 << 20
	}
	if opts.MaxNestingDepth <= 0 {
		opts.MaxNestingDepth = 1000
	}
	if opts.NamespaceMapping == "" {
		opts.NamespaceMapping = "schema"
	}
	if opts.DMLRowFilter != DMLRowFilterApply {
		// Anything but "apply" (config validation refuses other values)
		// is Hive's default: deny.
		opts.DMLRowFilter = DMLRowFilterDeny
	}
	statements := &otter.Options[cacheKey, *Result]{MaximumWeight: uint64(opts.CacheBytes) / 4 * 3,
		Weigher: func(k cacheKey, r *Result) uint32 { return clampWeight(k.weight() + r.weight()) }}
	templates := &otter.Options[cacheKey, *template]{MaximumWeight: uint64(opts.CacheBytes) / 4,
		Weigher: func(k cacheKey, t *template) uint32 { return clampWeight(k.weight() + t.weight()) }}
	if opts.CacheStats {
		statements.StatsRecorder = stats.NewCounter()
		templates.StatsRecorder = stats.NewCounter()
	}
	// The doorkeeper remembers about as many texts as the caches hold
	// entries of a typical size.
	return &Rewriter{opts: opts, settings: newSettingsList(opts.AllowedSettings), cache: otter.Must(statements), templates: otter.Must(templates),
		repeats: newDoorkeeper(int(opts.CacheBytes / typicalEntryBytes))}
}

// typicalEntryBytes is the size of a small cached rewrite (a lookup on a
// table with a few masks), for sizing the doorkeeper.
const typicalEntryBytes = 4 << 10

// entryOverhead is what an entry costs besides its strings: the cache's
// node, the Result and its slices' headers.
const entryOverhead = 512

func clampWeight(n int) uint32 {
	if n > 1<<31 {
		return 1 << 31
	}
	return uint32(n)
}

// weight estimates the bytes a key keeps alive.
func (k cacheKey) weight() int {
	return len(k.sql) + len(k.identity) + len(k.database) + len(k.searchPath) + len(k.defaultPath) + len(k.paramTypes) + len(k.client)
}

// weight estimates the bytes a Result keeps alive.
func (r *Result) weight() int {
	n := entryOverhead + len(r.SQL) + len(r.Fingerprint)
	if r.Err != nil {
		n += len(r.Err.Message) + len(r.Err.Detail) + len(r.Err.Hint)
	}
	for _, st := range r.Statements {
		n += 64 + len(st.Kind)
		for _, u := range st.Resources {
			n += 128 + len(u.Database) + len(u.Table) + 8*(len(u.PolicyIDs)+len(u.MaskPolicyIDs)+len(u.FilterPolicyIDs))
			for _, c := range u.Columns {
				n += 16 + len(c)
			}
		}
	}
	for _, st := range r.Audit.Statements {
		n += 48
		for _, u := range st.Uses {
			n += 96 + len(u.Resource) // Access, ResType and the ids are shared with Statements
		}
	}
	if d := r.Audit.Denied; d != nil {
		n += 128 + len(d.Resource) + len(d.Reason)
	}
	for _, v := range r.Views {
		n += len(v.Name) + len(v.Create) + 2*len(v.Attnums)
	}
	for _, p := range r.SearchPath {
		n += 16 + len(p)
	}
	return n
}

// weight estimates the bytes a template keeps alive (its Result, whose
// SQL the pieces repeat).
func (t *template) weight() int {
	n := t.res.weight() + 8*len(t.order)
	for _, p := range t.pieces {
		n += 16 + len(p)
	}
	return n
}

// doorkeeper remembers, approximately, which keys were seen: a
// direct-mapped table of their hashes. A collision only forgets a key or,
// once in 2^64, takes a new key for a seen one — either way a text is
// cached a little earlier or later, never served wrongly, since the cache
// itself compares whole keys.
type doorkeeper struct {
	seed  maphash.Seed
	slots []atomic.Uint64
}

func newDoorkeeper(size int) *doorkeeper {
	n := 1
	for n < 4*size {
		n <<= 1
	}
	return &doorkeeper{seed: maphash.MakeSeed(), slots: make([]atomic.Uint64, n)}
}

// seenBefore reports whether key was seen since its slot last changed,
// and records it.
func (d *doorkeeper) seenBefore(key cacheKey) bool {
	h := maphash.Comparable(d.seed, key)
	slot := &d.slots[h&uint64(len(d.slots)-1)]
	if slot.Load() == h {
		return true
	}
	slot.Store(h)
	return false
}

// Rewrite analyses sql for the session. It never returns a nil Result;
// a denial is Result.Err. Results are shared: callers must not modify them.
func (rw *Rewriter) Rewrite(ctx context.Context, env *Env, sess *Session, sql string) *Result {
	key := newCacheKey(env, sess, sql)
	if env.Policy.Unavailable != "" {
		// Stale or missing policies: nothing cached under a good state may
		// be served, and nothing decided now may outlive the outage.
		return rw.rewrite(ctx, env, sess, sql)
	}
	if r, ok := rw.cache.GetIfPresent(key); ok {
		return r
	}
	r, snap, ok := rw.rewriteTemplated(ctx, env, sess, sql, key)
	if ok {
		// Kept by its exact text only when the text comes back: with the
		// simple protocol most texts are new (their constants), and storing
		// each one costs more than the template lookup it would save.
		if rw.repeats.seenBefore(key) {
			key.catalogVersion = snap.Version
			rw.cache.Set(key, r)
		}
		return r
	}
	// The exact path goes on from the snapshot the template path ended
	// with (a forced reload there), on a copy: the caller's Env is never
	// written.
	if snap != env.Catalog {
		e := *env
		e.Catalog = snap
		env = &e
	}
	r, snap = rw.rewriteText(ctx, env, sess, sql, true)
	// A denial caused by a name the catalog did not know is not cached, so a
	// table created a moment later is found once the catalog reloads.
	if !r.volatile && (r.Err == nil || r.Err.Code != sqlstate.UndefinedTable) {
		key.catalogVersion = snap.Version
		rw.cache.Set(key, r)
	}
	return r
}

func (rw *Rewriter) rewrite(ctx context.Context, env *Env, sess *Session, sql string) *Result {
	r, _ := rw.rewriteText(ctx, env, sess, sql, true)
	return r
}

// rewriteText rewrites sql under env, which it only reads; with apply
// false it leaves the session's SQL prepared statements as they are (a
// literal template is analysed, not run). It returns the result and the
// catalog snapshot the analysis ended with: env.Catalog, or the one a
// forced reload (a name not found) brought, which the text's later
// statements were analysed with and the caller keys the result by.
func (rw *Rewriter) rewriteText(ctx context.Context, env *Env, sess *Session, sql string, apply bool) (res *Result, snap *catalog.Snapshot) {
	snap = env.Catalog
	defer func() {
		// A bug in the analysis must deny the statement, not kill the
		// process with every session in it.
		if p := recover(); p != nil {
			res = &Result{Err: errorf(sqlstate.InsufficientPrivilege, "internal error while analysing the statement (%v): denied for user %q", p, sess.Subject.User)}
		}
		res.decideAuditOrDeny(env, sess)
	}()
	tree, perr := parse(sql, rw.opts.MaxStatementBytes, rw.opts.MaxNestingDepth)
	if perr != nil {
		return &Result{Err: perr}, snap
	}
	res = &Result{SQL: sql, Fingerprint: fingerprint(sql)}
	if kind, err, info := authoringText(tree, sess.Subject.User); err != nil {
		return &Result{Err: err, Authoring: kind, Statements: []StatementInfo{info}, Fingerprint: res.Fingerprint}, snap
	}
	searchPath := sess.SearchPath
	pathChanged := false
	prep := &prepOverlay{sess: sess}
	defer func() {
		// Whatever the outcome, a text that names prepared statements
		// depends on the session's state and must not be cached.
		res.volatile = res.volatile || prep.touched
	}()
	for _, raw := range tree.Stmts {
		st := &stmtRewriter{
			rw:         rw,
			ctx:        ctx,
			env:        env,
			sess:       sess,
			snap:       snap,
			searchPath: searchPath,
			rels:       map[uint32]*relPolicy{},
			prep:       prep,
		}
		info, err := st.statement(raw.Stmt)
		if err != nil {
			return &Result{Err: err, Statements: append(res.Statements, info), Fingerprint: res.Fingerprint}, snap
		}
		if st.newSearchPath != nil {
			searchPath, pathChanged = st.newSearchPath, true
		}
		snap = st.snap // a forced reload is visible to the later statements
		res.Changed = res.Changed || st.changed
		res.constDependent = res.constDependent || st.constDependent
	views:
		for _, v := range st.views {
			for _, have := range res.Views {
				if have.Name == v.Name {
					continue views
				}
			}
			res.Views = append(res.Views, v)
		}
		res.Statements = append(res.Statements, info)
	}
	if pathChanged {
		res.SearchPath = searchPath
	}
	if res.Changed {
		out, derr := deparse(tree)
		if derr != nil {
			return &Result{Err: derr}, snap
		}
		// pg_query's deparser has corner cases whose output does not parse
		// ((0).f becomes 0.f): what is sent must be SQL the parser accepts.
		again, perr := parse(out, noLimit, noLimit)
		if perr != nil {
			if perr.Code == sqlstate.StatementTooComplex {
				return &Result{Err: perr}, snap
			}
			return &Result{Err: unanalysable(sqlstate.FeatureNotSupported, "cannot render the rewritten statement as SQL that parses again (%v); rewrite the statement", perr.Message)}, snap
		}
		// A text that renders differently once parsed again does not mean
		// what the rewriter built ((0).f became 0.f, read back as "0. AS
		// f"): refuse it rather than send something else.
		if twice, err := deparse(again); err != nil || twice != out {
			return &Result{Err: errorf(sqlstate.FeatureNotSupported, "cannot render the rewritten statement unambiguously; rewrite the statement (for instance without parenthesised field selections)")}, snap
		}
		res.SQL = out
	}
	if apply {
		prep.apply()
	}
	return res, snap
}

// Stamp is what a Result was decided under besides its text: the
// session's identity and search_path, the policy generation and schedule
// epoch, the catalog version — the parts of the cache key that change.
// A caller that sends the same text again (a prepared statement, checked
// at every Bind) compares stamps instead of looking the text up again:
// no key to build, no hashing, nothing shared between sessions.
type Stamp struct {
	identity                               string
	searchPath                             []string
	policyGen, policyEpoch, catalogVersion uint64
	ok                                     bool
}

// StampOf returns the stamp of res, rewritten under env and sess. A
// catalog reload during the rewrite is not in env (Rewrite does not write
// it): the stamp then carries the version before it, and the next check
// finds it outdated and looks the text up again. The stamp
// matches nothing when res must be rewritten every time, as the cache
// does not keep it either: policies unavailable, a denial, a text that
// depends on the session's SQL prepared statements.
func StampOf(env *Env, sess *Session, res *Result) Stamp {
	if env.Policy.Unavailable != "" || res.Err != nil || res.volatile {
		return Stamp{}
	}
	return Stamp{
		identity:       sess.IdentityKey,
		searchPath:     sess.SearchPath,
		policyGen:      env.Policy.Generation,
		policyEpoch:    policyEpoch(env),
		catalogVersion: env.Catalog.Version,
		ok:             true,
	}
}

// Current reports whether a Result stamped s is still the one Rewrite
// would return under env and sess. Session.Database and DefaultSearchPath
// are fixed for a session's life, so they are not compared.
func (s Stamp) Current(env *Env, sess *Session) bool {
	return s.ok && env.Policy.Unavailable == "" &&
		s.policyGen == env.Policy.Generation &&
		s.catalogVersion == env.Catalog.Version &&
		s.identity == sess.IdentityKey &&
		slices.Equal(s.searchPath, sess.SearchPath) &&
		s.policyEpoch == policyEpoch(env)
}
