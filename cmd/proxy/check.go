package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/catalog/yamlcatalog"
	"github.com/pgranger/pgranger/config"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/sqlrewrite"
)

// `pgranger check --config FILE --user U [--groups a,b] [--roles a,b]
// [--attr k=v ...] [--catalog FILE] "SQL"` shows what pgranger would do
// with a statement for an identity: per governed relation the access
// decision and deciding policies, the masks of the columns it reads and the
// row filter, then the SQL it would send (or the denial). Nothing runs.
// Exit status: 0 allowed, 1 denied (or policies/catalog unavailable),
// 2 usage.

type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

type attrFlag map[string]string

func (a attrFlag) String() string {
	parts := make([]string, 0, len(a))
	for _, k := range sortedKeys(a) {
		parts = append(parts, k+"="+a[k])
	}
	return strings.Join(parts, ",")
}

func (a attrFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want key=value, got %q", v)
	}
	a[strings.TrimSpace(k)] = val
	return nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func checkCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "the TOML configuration (policies, namespace mapping, backend) (required)")
	user := fs.String("user", "", "the user to check for (required)")
	var groups, roles, searchPath listFlag
	attrs := attrFlag{}
	fs.Var(&groups, "groups", "the user's groups, comma-separated (default: the static user's from the config)")
	fs.Var(&roles, "roles", "the user's roles, comma-separated (default: the static user's from the config)")
	fs.Var(attrs, "attr", "a user attribute key=value; repeat for more (default: the static user's from the config)")
	catalogPath := fs.String("catalog", "", "YAML table declarations to use instead of connecting to the backend")
	database := fs.String("database", "", "the PostgreSQL database (default: the backend DSN's)")
	fs.Var(&searchPath, "search-path", `the session's search_path (default "$user",public)`)
	who := fs.Bool("who", false, "also list, per relation, the users and groups the policies allow or deny the access (Ranger's resource access info)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: pgranger check --config FILE --user U [--groups a,b] [--roles a,b] [--attr k=v ...] [--catalog FILE] [--who] "SQL"`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *cfgPath == "" || *user == "" || fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	sql := strings.Join(fs.Args(), " ")
	cfg, err := config.Load(*cfgPath, os.Environ())
	if err != nil {
		fmt.Fprintf(stderr, "pgranger check: %v\n", err)
		return 1
	}
	eng, err := loadEngine(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "pgranger check: policies: %v\n", err)
		return 1
	}

	subj := &policy.Subject{User: *user}
	for _, u := range cfg.Identity.Users {
		if u.Name == *user {
			subj.Groups, subj.Roles, subj.Attributes = u.Groups, u.Roles, u.Attributes
		}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["groups"] {
		subj.Groups = groups
	}
	if set["roles"] {
		subj.Roles = roles
	}
	if set["attr"] {
		subj.Attributes = attrs
	}

	snap, db, closeCatalog, ok := commandCatalog("check", cfg, *database, *catalogPath, cfg.Catalog.StoredMasks, stderr)
	if !ok {
		return 1
	}
	defer closeCatalog()

	path := []string(searchPath)
	if path == nil {
		path = []string{"$user", "public"}
	}
	rw := sqlrewrite.New(sqlrewrite.Options{
		MaxStatementBytes: cfg.Listen.MaxStatementBytes,
		MaxNestingDepth:   cfg.Listen.MaxNestingDepth,
		NamespaceMapping:  cfg.Policy.NamespaceMapping,
		Mask:              sqlrewrite.MaskOptions{HashAlgo: cfg.Policy.HashAlgo, Dialect: cfg.Policy.MaskDialect},
		DMLRowFilter:      cfg.Policy.DMLRowFilter,
		AllowDDL:          cfg.Policy.AllowDDL,
		AllowedSettings:   cfg.Policy.AllowedSettings,
	})
	now := time.Now()
	sess := &sqlrewrite.Session{Subject: subj, IdentityKey: sqlrewrite.IdentityKey(subj), Database: db, SearchPath: path, DefaultSearchPath: []string{"$user", "public"}}
	env := &sqlrewrite.Env{Policy: policy.Snapshot{Engine: eng, Generation: 1}, Catalog: snap, Now: now}
	res := rw.Rewrite(context.Background(), env, sess, sql)

	c := &checkPrinter{w: stdout, eng: eng, subj: subj, snap: snap, at: now, mapping: cfg.Policy.NamespaceMapping, database: db, who: *who}
	c.identity()
	// The same policy masks differently per dialect: say which is in force.
	fmt.Fprintf(stdout, "mask dialect: %s (%s; policy.mask-dialect)\n", cfg.Policy.MaskDialect, maskDialectWhose[cfg.Policy.MaskDialect])
	for i, st := range res.Statements {
		c.statement(i+1, st)
	}
	if res.Err != nil {
		fmt.Fprintf(stdout, "result: denied\nERROR %s: %s\n", res.Err.Code, res.Err.Message)
		if res.Err.Detail != "" {
			fmt.Fprintf(stdout, "DETAIL: %s\n", res.Err.Detail)
		}
		return 1
	}
	fmt.Fprintln(stdout, "result: allowed")
	if len(res.Views) > 0 {
		fmt.Fprintln(stdout, "temporary views for DML through a row filter (created on the backend session before the statement):")
		for _, v := range res.Views {
			fmt.Fprintln(stdout, v.Create+";")
		}
	}
	if res.Changed {
		fmt.Fprintln(stdout, "rewritten SQL:")
	} else {
		fmt.Fprintln(stdout, "SQL sent unchanged:")
	}
	fmt.Fprintln(stdout, res.SQL)
	return 0
}

// loadEngine builds the policy engine from the configuration's policy
// source.
func loadEngine(cfg *config.Config) (*policy.Engine, error) {
	if cfg.Policy.Source != "file" {
		return nil, fmt.Errorf("policy.source %q: check reads policy files (policy.source = \"file\")", cfg.Policy.Source)
	}
	pf := cfg.Policy.File
	b, err := ranger.LoadFiles(ranger.FilePaths{Policies: pf.Policies, Tags: pf.Tags, Roles: pf.Roles, UserStore: pf.UserStore})
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, errors.New("no policy bundle")
	}
	return policy.NewEngine(b, policy.Options{MaskPrecedence: cfg.Policy.MaskPrecedence})
}

type checkPrinter struct {
	w        io.Writer
	eng      *policy.Engine
	subj     *policy.Subject
	snap     *catalog.Snapshot
	at       time.Time
	mapping  string
	database string
	who      bool // print the resource access info of each relation
}

// maskDialectWhose names whose results a mask dialect reproduces.
var maskDialectWhose = map[string]string{
	sqlrewrite.MaskDialectHive:  "HiveServer2's mask results",
	sqlrewrite.MaskDialectSpark: "Spark's mask results under Kyuubi's Ranger plugin",
}

func (c *checkPrinter) identity() {
	s := c.subj
	fmt.Fprintf(c.w, "user %s", s.User)
	if len(s.Groups) > 0 {
		fmt.Fprintf(c.w, ", groups %s", strings.Join(s.Groups, ","))
	}
	if roles := c.eng.RolesOf(s); len(roles) > 0 {
		fmt.Fprintf(c.w, ", roles %s", strings.Join(roles, ","))
	}
	if len(s.Attributes) > 0 {
		fmt.Fprintf(c.w, ", attributes %s", attrFlag(s.Attributes).String())
	}
	if c.eng.IsSuperUser(s) {
		fmt.Fprint(c.w, " (super user: policies, masks and row filters do not apply)")
	}
	fmt.Fprintln(c.w)
}

// owner finds the relation owner behind a Ranger resource, for {OWNER}.
func (c *checkPrinter) owner(db, table string) string {
	schema := db
	if c.mapping == "database.schema" {
		schema = strings.TrimPrefix(db, c.database+".")
	}
	if rel, ok := c.snap.Lookup(schema, table); ok {
		return rel.Owner
	}
	return ""
}

func (c *checkPrinter) statement(n int, st sqlrewrite.StatementInfo) {
	fmt.Fprintf(c.w, "statement %d: %s\n", n, st.Kind)
	for _, u := range st.Resources {
		if u.Database == "" && u.Table == "" {
			continue
		}
		fmt.Fprintf(c.w, "  database=%s table=%s\n", u.Database, u.Table)
		if c.who {
			c.accessInfo(u)
		}
		if c.eng.IsSuperUser(c.subj) {
			fmt.Fprintln(c.w, "    super user: allowed (policy -1)")
			continue
		}
		base := policy.Resource{Database: u.Database, Table: u.Table, Owner: c.owner(u.Database, u.Table)}
		access := u.Access
		if access == "" {
			access = "select"
		}
		if len(u.Columns) == 0 {
			d := c.eng.Evaluate(&policy.Request{Subject: c.subj, Hive: base, Access: access, At: c.at, Want: policy.WantAccess}).Access
			fmt.Fprintf(c.w, "    %s (table-level, no column read): %s\n", access, decisionString(d))
		}
		// Group columns with the same decision.
		type group struct {
			d    policy.Decision
			cols []string
		}
		var groups []*group
		for _, col := range u.Columns {
			r := base
			r.Column = col
			d := c.eng.Evaluate(&policy.Request{Subject: c.subj, Hive: r, Access: access, At: c.at, Want: policy.WantAccess}).Access
			var g *group
			for _, x := range groups {
				if x.d.Allowed == d.Allowed && x.d.PolicyID == d.PolicyID {
					g = x
				}
			}
			if g == nil {
				g = &group{d: d}
				groups = append(groups, g)
			}
			g.cols = append(g.cols, col)
		}
		for _, g := range groups {
			fmt.Fprintf(c.w, "    %s %s: %s\n", access, strings.Join(g.cols, ", "), decisionString(g.d))
		}
		for _, col := range u.Columns {
			r := base
			r.Column = col
			if !c.eng.Evaluate(&policy.Request{Subject: c.subj, Hive: r, Access: access, At: c.at, Want: policy.WantAccess}).Access.Allowed {
				continue
			}
			m := c.eng.Evaluate(&policy.Request{Subject: c.subj, Hive: r, At: c.at, Want: policy.WantMask}).Mask
			if m.Type == "" {
				continue
			}
			fmt.Fprintf(c.w, "    mask %s: %s", col, m.Type)
			if m.Type == ranger.MaskTypeCustom {
				fmt.Fprintf(c.w, " %q", m.ValueExpr)
			}
			if m.Tag != "" {
				fmt.Fprintf(c.w, " from tag %s", m.Tag)
			}
			if m.Unmappable {
				fmt.Fprint(c.w, " (cannot be applied: the column is shown as NULL)")
			}
			fmt.Fprintf(c.w, " (policy %d)\n", m.PolicyID)
		}
		rf := c.eng.Evaluate(&policy.Request{Subject: c.subj, Hive: base, At: c.at, Want: policy.WantRowFilter}).RowFilter
		if len(rf.Exprs) == 0 {
			fmt.Fprintln(c.w, "    row filter: none")
		}
		for i, e := range rf.Exprs {
			fmt.Fprintf(c.w, "    row filter: %s (policy %d)\n", e, rf.PolicyIDs[i])
		}
	}
}

// accessInfo prints who the policies allow or deny the relation's access,
// whoever asks (policy.Engine.ResourceAccessInfo); super users are not
// listed.
func (c *checkPrinter) accessInfo(u sqlrewrite.ResourceUse) {
	access := u.Access
	if access == "" {
		access = "select"
	}
	info := c.eng.ResourceAccessInfo(policy.Request{Resource: map[string][]string{"database": {u.Database}, "table": {u.Table}},
		Owner: c.owner(u.Database, u.Table), Access: access, At: c.at})
	list := func(s []string) string {
		if len(s) == 0 {
			return "-"
		}
		return strings.Join(s, ",")
	}
	fmt.Fprintf(c.w, "    who may %s: users %s; groups %s\n", access, list(info.AllowedUsers), list(info.AllowedGroups))
	if len(info.DeniedUsers)+len(info.DeniedGroups) > 0 {
		fmt.Fprintf(c.w, "    denied %s: users %s; groups %s\n", access, list(info.DeniedUsers), list(info.DeniedGroups))
	}
}

// decisionString is policy's wording of d; the line already names the
// access, so a default deny reads "denied (no policy grants it)".
func decisionString(d policy.Decision) string {
	if !d.Allowed && d.PolicyID == 0 {
		return "denied (" + d.Verdict("it") + ")"
	}
	return d.Verdict("")
}

// commandCatalog is the catalog a command (check, masks) works on: the
// YAML declarations of catalogPath, or the live catalog of database
// (default: backend.dsn's) read as the proxy reads it, stored masks
// verified when verifyStoredMasks. On failure it has told stderr why.
func commandCatalog(command string, cfg *config.Config, database, catalogPath string, verifyStoredMasks bool, stderr io.Writer) (snap *catalog.Snapshot, db string, closeFn func(), ok bool) {
	db = database
	if db == "" {
		if pc, err := pgconn.ParseConfig(cfg.Backend.DSN); err == nil {
			db = pc.Database
		}
	}
	if catalogPath != "" {
		snap, err := yamlcatalog.LoadFile(catalogPath)
		if err != nil {
			fmt.Fprintf(stderr, "pgranger %s: catalog: %v\n", command, err)
			return nil, db, nil, false
		}
		return snap, db, func() {}, true
	}
	timeout := time.Duration(cfg.Backend.ConnectTimeoutSecs) * time.Second
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var copts catalog.Options
	if verifyStoredMasks {
		copts.StoredMasks = sqlrewrite.StoredMaskBuilder(sqlrewrite.MaskOptions{HashAlgo: cfg.Policy.HashAlgo, Dialect: cfg.Policy.MaskDialect})
	}
	cat, err := catalog.OpenWith(ctx, cfg.Backend.DSN, db, time.Hour, copts)
	if err != nil {
		fmt.Fprintf(stderr, "pgranger %s: catalog of database %q from backend.dsn: %v (use --catalog FILE offline)\n", command, db, err)
		return nil, db, nil, false
	}
	return cat.Current(), db, cat.Close, true
}
