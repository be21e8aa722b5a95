package authoring

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/sqlrewrite"
	"github.com/pgranger/pgranger/sqlstate"
)

// Config connects a Service to the policies.
type Config struct {
	// Store is where changes are written.
	Store Store
	// InForce returns the engine and bundle in force, or why there is none
	// (stale, never loaded): authorisation needs a trustworthy engine.
	InForce func() (*policy.Engine, *ranger.Bundle, string)
	// Reload makes the policies in force catch up with the store now
	// (ranger.Source.Reload: the file source reads its files again, the
	// Ranger source downloads), so the next statement of any session sees
	// the change.
	Reload func(ctx context.Context) error
	// NamespaceMapping is policy.namespace-mapping ("schema" or
	// "database.schema").
	NamespaceMapping string
	// StaticUsers are the configuration's static users, known principals
	// besides Ranger's user store.
	StaticUsers []KnownPrincipal
	// MaxStatementBytes and MaxNestingDepth bound the statements parsed
	// (listen.max-statement-bytes, listen.max-nesting-depth), as for every
	// statement (sqlrewrite.Parse).
	MaxStatementBytes, MaxNestingDepth int
	Log                                *slog.Logger
	Now                                func() time.Time
}

// Service runs authoring statements; it is safe for concurrent use by
// every session. Writes to one resource are serialised: two sessions that
// change the same table's row filters take turns, each reading what the
// other wrote.
type Service struct {
	cfg   Config
	locks keyedMutex
}

// New returns a Service.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.NamespaceMapping == "" {
		cfg.NamespaceMapping = "schema"
	}
	if cfg.MaxStatementBytes <= 0 {
		cfg.MaxStatementBytes = 1 << 20
	}
	if cfg.MaxNestingDepth <= 0 {
		cfg.MaxNestingDepth = 1000
	}
	return &Service{cfg: cfg}
}

// Request is one authoring statement of one session.
type Request struct {
	SQL        string
	Subject    *policy.Subject
	Database   string // the PostgreSQL database of the session
	ClientAddr string
	// Relation finds a table: schema "" resolves name along the session's
	// search_path. nil: names are not checked and must be qualified.
	Relation func(schema, name string) (*catalog.Relation, bool)
}

// Notice is a message for the client besides the result.
type Notice struct {
	Severity string // NOTICE or WARNING
	Message  string
}

// Result is what the client gets, and what the audit record says.
type Result struct {
	Tag     string // the command tag: GRANT, REVOKE, CREATE POLICY, …
	Notices []Notice
	Err     *sqlrewrite.Error // the refusal; nil on success
	// Resource ("db/table[/column]"), its type (@table, @column) and the
	// access the statement concerns, for the audit record.
	Resource, ResType, Access string
	// Sent lists the requests the statement sent to Ranger Admin, or the
	// changes it made to the policy and tag files, in order.
	Sent []string
}

// plan is one statement, mapped to Ranger: one implementation per
// statement kind (grant.go, rowfilter.go, mask.go, tags.go).
type plan interface {
	// audit fills the resource, its type and the access of the result.
	audit(r *Result)
	// lockKeys are the resources the statement writes, for serialising
	// writers within this process.
	lockKeys() []string
	// authorize decides whether the subject may make the change.
	authorize(x *exec) *sqlrewrite.Error
	// run reads, writes, reloads and verifies.
	run(ctx context.Context, x *exec) *sqlrewrite.Error
}

// exec is what a plan runs with.
type exec struct {
	svc     *Service
	req     *Request
	eng     *policy.Engine
	bundle  *ranger.Bundle
	dir     *Directory
	now     time.Time
	notices []Notice
}

func (x *exec) user() string { return x.req.Subject.User }

func (x *exec) notice(format string, args ...any) {
	x.notices = append(x.notices, Notice{Severity: "NOTICE", Message: fmt.Sprintf(format, args...)})
}

// reload brings the change into force; a failure is a warning, not an
// error: the change is written, and the next poll brings it.
func (x *exec) reload(ctx context.Context) {
	if x.svc.cfg.Reload == nil {
		return
	}
	if err := x.svc.cfg.Reload(ctx); err != nil {
		x.svc.cfg.Log.Warn("authoring: the change is written but could not be loaded at once", "user", x.user(), "err", err)
		x.notices = append(x.notices, Notice{Severity: "WARNING",
			Message: "the change is written, but pgranger could not load it at once; it applies within the policy poll interval"})
		return
	}
	if eng, b, why := x.svc.cfg.InForce(); why == "" {
		x.eng, x.bundle = eng, b
	}
}

// Run executes one authoring statement for a session.
func (s *Service) Run(ctx context.Context, req *Request) *Result {
	res := &Result{Tag: "AUTHORING"}
	log := &sentLog{}
	ctx = withSentLog(ctx, log)
	defer func() { res.Sent = log.list() }()
	p, err := s.plan(req, res)
	if p != nil {
		p.audit(res)
	}
	if err != nil {
		res.Err = err
		return res
	}
	eng, bundle, why := s.cfg.InForce()
	if why != "" || eng == nil {
		res.Err = errorf(sqlstate.InsufficientPrivilege, "policies are unavailable (%s): %s denied for user %q", why, res.Tag, req.Subject.User)
		return res
	}
	x := &exec{svc: s, req: req, eng: eng, bundle: bundle, dir: NewDirectory(bundle, s.cfg.StaticUsers), now: s.cfg.Now()}
	if err := p.authorize(x); err != nil {
		res.Err = err
		return res
	}
	unlock := s.locks.lock(p.lockKeys())
	defer unlock()
	err = p.run(ctx, x)
	res.Notices = x.notices
	res.Err = err
	return res
}

// plan parses the statement, sets the result's command tag, and maps the
// statement to Ranger.
func (s *Service) plan(req *Request, res *Result) (plan, *sqlrewrite.Error) {
	tree, err := sqlrewrite.Parse(req.SQL, s.cfg.MaxStatementBytes, s.cfg.MaxNestingDepth)
	if err != nil {
		return nil, err
	}
	if len(tree.Stmts) != 1 {
		return nil, unsupported("an authoring statement must be sent on its own, not with other statements")
	}
	res.Tag = statementTag(tree.Stmts[0].Stmt)
	st := &stmtContext{svc: s, req: req, sql: req.SQL}
	switch v := tree.Stmts[0].Stmt.Node.(type) {
	case *pg.Node_GrantStmt:
		return st.grant(v.GrantStmt)
	case *pg.Node_CreatePolicyStmt:
		return st.createPolicy(v.CreatePolicyStmt)
	case *pg.Node_AlterPolicyStmt:
		return st.alterPolicy(v.AlterPolicyStmt)
	case *pg.Node_RenameStmt:
		if v.RenameStmt.RenameType == pg.ObjectType_OBJECT_POLICY {
			return st.renamePolicy(v.RenameStmt)
		}
	case *pg.Node_DropStmt:
		if v.DropStmt.RemoveType == pg.ObjectType_OBJECT_POLICY {
			return st.dropPolicy(v.DropStmt)
		}
	case *pg.Node_SecLabelStmt:
		isNull, err := sqlrewrite.LabelIsNull(req.SQL, s.cfg.MaxStatementBytes, s.cfg.MaxNestingDepth)
		if err != nil {
			return nil, err
		}
		label := v.SecLabelStmt.Label
		switch v.SecLabelStmt.Provider {
		case sqlrewrite.LabelProviderMasks:
			return st.maskLabel(v.SecLabelStmt, label, isNull)
		case sqlrewrite.LabelProviderTags:
			return st.tagLabel(v.SecLabelStmt, label, isNull)
		}
	}
	return nil, unsupported("this statement is not an authoring statement pgranger writes to Ranger")
}

// statementTag is the command tag of an authoring statement.
func statementTag(n *pg.Node) string {
	switch v := n.Node.(type) {
	case *pg.Node_GrantStmt:
		if v.GrantStmt.IsGrant {
			return "GRANT"
		}
		return "REVOKE"
	case *pg.Node_CreatePolicyStmt:
		return "CREATE POLICY"
	case *pg.Node_AlterPolicyStmt, *pg.Node_RenameStmt:
		return "ALTER POLICY"
	case *pg.Node_DropStmt:
		return "DROP POLICY"
	case *pg.Node_SecLabelStmt:
		return "SECURITY LABEL"
	}
	return "AUTHORING"
}

// stmtContext is what plan builders share.
type stmtContext struct {
	svc *Service
	req *Request
	sql string
}

// rangerDatabase maps a schema to Ranger's database (policy.namespace-mapping).
func (st *stmtContext) rangerDatabase(schema string) string {
	if st.svc.cfg.NamespaceMapping == "database.schema" {
		return st.req.Database + "." + schema
	}
	return schema
}

// relation resolves a table named in a statement: the relation (nil when
// the catalog is not consulted), its schema and name.
func (st *stmtContext) relation(schema, name string) (*catalog.Relation, string, string, *sqlrewrite.Error) {
	if st.req.Relation == nil {
		if schema == "" {
			return nil, "", "", unsupported("name the schema of table %q: pgranger writes Ranger's database=<schema>, table=<table>", name)
		}
		return nil, schema, name, nil
	}
	rel, ok := st.req.Relation(schema, name)
	if !ok {
		full := name
		if schema != "" {
			full = schema + "." + name
		}
		return nil, "", "", errorf(sqlstate.UndefinedTable, "relation %q does not exist", full)
	}
	if rel.IsSystem() {
		return nil, "", "", unsupported("%s.%s is a system catalog, not a Ranger resource", rel.Schema, rel.Name)
	}
	if rel.RootSchema != rel.Schema || rel.RootName != rel.Name {
		return nil, "", "", unsupported("%s.%s is a partition or child of %s.%s, whose policies govern it: write them on %s.%s",
			rel.Schema, rel.Name, rel.RootSchema, rel.RootName, rel.RootSchema, rel.RootName)
	}
	return rel, rel.Schema, rel.Name, nil
}

// columnsOf is the set of a relation's columns (nil when unknown).
func columnsOf(rel *catalog.Relation) map[string]bool {
	if rel == nil {
		return nil
	}
	m := map[string]bool{}
	for _, c := range rel.Columns {
		m[c.Name] = true
	}
	return m
}

// adminDenied is the refusal of a change the subject may not make.
func adminDenied(x *exec, verb string, res policy.Resource, pgName string, d policy.AdminDecision) *sqlrewrite.Error {
	col := res.Column
	what := "table " + pgName
	if col != "" && col != "*" {
		what = "column " + pgName
	}
	access := strings.Join(d.Missing, ", ")
	e := &sqlrewrite.Error{
		Code:    sqlstate.InsufficientPrivilege,
		Message: fmt.Sprintf("pgranger: permission denied: user %q may not %s %s on %s: it has no delegated admin for %s there", x.user(), verb, access, what, access),
		Detail: fmt.Sprintf("Ranger resource %s: no enabled access policy gives user %q an allow item with delegateAdmin for %s; nothing was sent to Ranger",
			resourceText(res), x.user(), access),
		Hint:   "A Ranger admin gives delegated admin with an allow item marked Delegate Admin on the resource (or makes the user a super user).",
		Denied: &sqlrewrite.Denial{Database: res.Database, Table: res.Table, Column: col, Access: access},
	}
	return e
}

func resourceText(r policy.Resource) string {
	s := "database=" + r.Database + ", table=" + r.Table
	if r.Column != "" {
		s += ", column=" + r.Column
	}
	return s
}

// keyedMutex serialises writers per resource key within the process.
type keyedMutex struct {
	mu   sync.Mutex
	held map[string]*keyLock
}

type keyLock struct {
	mu   sync.Mutex
	refs int
}

// lock takes every key (in sorted order, so two statements sharing keys
// cannot deadlock) and returns the function that releases them.
func (k *keyedMutex) lock(keys []string) func() {
	keys = append([]string(nil), keys...)
	sort.Strings(keys)
	var taken []*keyLock
	var names []string
	for i, key := range keys {
		if i > 0 && key == keys[i-1] {
			continue
		}
		k.mu.Lock()
		if k.held == nil {
			k.held = map[string]*keyLock{}
		}
		l := k.held[key]
		if l == nil {
			l = &keyLock{}
			k.held[key] = l
		}
		l.refs++
		k.mu.Unlock()
		l.mu.Lock()
		taken = append(taken, l)
		names = append(names, key)
	}
	return func() {
		for i := len(taken) - 1; i >= 0; i-- {
			taken[i].mu.Unlock()
			k.mu.Lock()
			taken[i].refs--
			if taken[i].refs == 0 {
				delete(k.held, names[i])
			}
			k.mu.Unlock()
		}
	}
}
