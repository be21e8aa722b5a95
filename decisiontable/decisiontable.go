// Package decisiontable runs pgranger's decision tables: YAML files naming
// Ranger policy documents, users and cases, each a resource request (with
// the expected decision, deciding policy, mask and row filter) or a SQL
// statement (with the expected rewrite or denial). The format is in
// docs/configuration.md; `pgranger test` runs them.
package decisiontable

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/catalog/yamlcatalog"
	"github.com/pgranger/pgranger/config"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/sqlrewrite"
)

// decisionFile is the YAML format of a decision table.
type decisionFile struct {
	// Ranger documents, relative to the YAML file.
	Policies  string `yaml:"policies"`
	Tags      string `yaml:"tags"`
	Roles     string `yaml:"roles"`
	UserStore string `yaml:"userstore"`

	Options struct {
		NamespaceMapping string   `yaml:"namespace-mapping"` // "schema" (default) or "database.schema"
		MaskPrecedence   string   `yaml:"mask-precedence"`   // "tag" (default) or "resource"
		HashAlgo         string   `yaml:"hash-algo"`         // "sha256" (default) or "sha512"
		MaskDialect      string   `yaml:"mask-dialect"`      // "hive" (default) or "spark"
		Database         string   `yaml:"database"`          // PostgreSQL database of SQL cases (default "postgres")
		SearchPath       []string `yaml:"search-path"`       // default ["$user", "public"]
		At               string   `yaml:"at"`                // evaluation time, RFC 3339 (default: now)
	} `yaml:"options"`

	Users     map[string]identityDecl `yaml:"users"`
	Catalog   yaml.Node               `yaml:"catalog"` // table declarations, built by Options.Catalog
	Functions []string                `yaml:"functions"`
	Cases     []caseDecl              `yaml:"cases"`
}

type identityDecl struct {
	Groups     []string          `yaml:"groups"`
	Roles      []string          `yaml:"roles"`
	Attributes map[string]string `yaml:"attributes"`
}

type caseDecl struct {
	Name       string            `yaml:"name"`
	User       string            `yaml:"user"`
	Groups     []string          `yaml:"groups"`
	Roles      []string          `yaml:"roles"`
	Attributes map[string]string `yaml:"attributes"`
	At         string            `yaml:"at"`

	Resource *resourceDecl `yaml:"resource"`
	Access   string        `yaml:"access"`

	SQL        string   `yaml:"sql"`
	SearchPath []string `yaml:"search-path"`

	Expect expectDecl `yaml:"expect"`

	line int
}

// resourceDecl is a Ranger resource: "db.table[.column]" or a mapping.
type resourceDecl struct {
	Database string `yaml:"database"`
	Table    string `yaml:"table"`
	Column   string `yaml:"column"`
	Owner    string `yaml:"owner"`
}

func (r *resourceDecl) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		parts := strings.Split(n.Value, ".")
		if len(parts) < 2 || len(parts) > 3 {
			return fmt.Errorf("line %d: resource %q: want database.table or database.table.column (or a mapping)", n.Line, n.Value)
		}
		r.Database, r.Table = parts[0], parts[1]
		if len(parts) == 3 {
			r.Column = parts[2]
		}
		return nil
	}
	if err := yamlcatalog.CheckKeys(n, "database", "table", "column", "owner"); err != nil {
		return err
	}
	type plain resourceDecl
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*r = resourceDecl(p)
	return nil
}

type expectDecl struct {
	Decision string    `yaml:"decision"` // allow | deny
	Policy   *policyID `yaml:"policy"`   // deciding access policy

	Mask       *string   `yaml:"mask"`      // mask type, or none
	MaskExpr   *string   `yaml:"mask-expr"` // CUSTOM valueExpr, verbatim
	MaskPolicy *policyID `yaml:"mask-policy"`

	Filter       *string    `yaml:"filter"` // row filter (filters ANDed), verbatim; or none
	FilterPolicy *policyIDs `yaml:"filter-policy"`

	SQL         *string  `yaml:"sql"` // the rewritten SQL, exactly
	Unchanged   bool     `yaml:"unchanged"`
	Contains    []string `yaml:"contains"`
	NotContains []string `yaml:"not-contains"`
	Error       string   `yaml:"error"`   // SQLSTATE of the denial
	Message     string   `yaml:"message"` // part of the denial message
}

// policyID is a policy id, "none" (no policy decided: default deny, no
// mask, no filter) or "superuser".
type policyID int64

func (p *policyID) UnmarshalYAML(n *yaml.Node) error {
	switch strings.ToLower(strings.TrimSpace(n.Value)) {
	case "none":
		*p = 0
		return nil
	case "superuser", "super-user":
		*p = -1
		return nil
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil || n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: policy id %q: want a number, none or superuser", n.Line, n.Value)
	}
	*p = policyID(v)
	return nil
}

func (p policyID) String() string {
	switch p {
	case 0:
		return "none"
	case -1:
		return "superuser"
	}
	return strconv.FormatInt(int64(p), 10)
}

// policyIDs is one id or a list of them.
type policyIDs []policyID

func (ps *policyIDs) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.SequenceNode {
		var list []policyID
		if err := n.Decode(&list); err != nil {
			return err
		}
		*ps = list
		return nil
	}
	var one policyID
	if err := one.UnmarshalYAML(n); err != nil {
		return err
	}
	if one == 0 {
		*ps = policyIDs{}
	} else {
		*ps = policyIDs{one}
	}
	return nil
}

func (ps policyIDs) String() string {
	if len(ps) == 0 {
		return "none"
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.String()
	}
	return strings.Join(parts, ",")
}

// Suite is a loaded decision table with its engine.
type Suite struct {
	file   string
	f      decisionFile
	engine *policy.Engine
	snap   *catalog.Snapshot // nil without a catalog
	rw     *sqlrewrite.Rewriter
	at     time.Time
	users  map[string]identityDecl
}

// Options are what a decision table may take from outside itself.
type Options struct {
	// Config, when not nil, supplies the policy files when the table
	// names none, options it leaves unset, and its static users.
	Config *config.Config
	// Catalog builds the static catalog from the table's `catalog:`
	// (a sequence node) and `functions:`. Without it a table declaring
	// tables is an error.
	Catalog func(tables *yaml.Node, functions []string) (*catalog.Snapshot, error)
}

// Load reads a decision table and loads the policies it names.
func Load(path string, opts Options) (*Suite, error) {
	cfg := opts.Config
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f decisionFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err == nil {
		caseLines(&root, f.Cases)
	}
	if len(f.Cases) == 0 {
		return nil, errors.New("no cases")
	}
	dir := filepath.Dir(path)
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	paths := ranger.FilePaths{Policies: rel(f.Policies), Tags: rel(f.Tags), Roles: rel(f.Roles), UserStore: rel(f.UserStore)}
	o := &f.Options
	if cfg != nil {
		if f.Policies == "" {
			pf := cfg.Policy.File
			paths = ranger.FilePaths{Policies: pf.Policies, Tags: pf.Tags, Roles: pf.Roles, UserStore: pf.UserStore}
		}
		if o.NamespaceMapping == "" {
			o.NamespaceMapping = cfg.Policy.NamespaceMapping
		}
		if o.MaskPrecedence == "" {
			o.MaskPrecedence = cfg.Policy.MaskPrecedence
		}
		if o.HashAlgo == "" {
			o.HashAlgo = cfg.Policy.HashAlgo
		}
		if o.MaskDialect == "" {
			o.MaskDialect = cfg.Policy.MaskDialect
		}
	}
	if paths.Policies == "" {
		return nil, errors.New("no policies: name the ServicePolicies file with `policies:` (relative to this file) or pass --config")
	}
	bundle, err := ranger.LoadFiles(paths)
	if err != nil {
		return nil, err
	}
	eng, err := policy.NewEngine(bundle, policy.Options{MaskPrecedence: o.MaskPrecedence})
	if err != nil {
		return nil, err
	}
	s := &Suite{file: path, f: f, engine: eng, users: map[string]identityDecl{}, at: time.Now()}
	if o.At != "" {
		if s.at, err = time.Parse(time.RFC3339, o.At); err != nil {
			return nil, fmt.Errorf("options.at: %w", err)
		}
	}
	if cfg != nil {
		for _, u := range cfg.Identity.Users {
			s.users[u.Name] = identityDecl{Groups: u.Groups, Roles: u.Roles, Attributes: u.Attributes}
		}
	}
	for name, u := range f.Users {
		s.users[name] = u
	}
	if f.Catalog.Kind != 0 && len(f.Catalog.Content) > 0 {
		if opts.Catalog == nil {
			return nil, errors.New("catalog: table declarations are not supported here")
		}
		if s.snap, err = opts.Catalog(&f.Catalog, f.Functions); err != nil {
			return nil, err
		}
	}
	switch o.NamespaceMapping {
	case "", "schema", "database.schema":
	default:
		return nil, fmt.Errorf("options.namespace-mapping %q: want schema or database.schema", o.NamespaceMapping)
	}
	if _, err := sqlrewrite.ParseMaskDialect(o.MaskDialect); err != nil {
		return nil, fmt.Errorf("options.mask-dialect %q: want hive or spark", o.MaskDialect)
	}
	if o.Database == "" {
		o.Database = "postgres"
	}
	s.rw = sqlrewrite.New(sqlrewrite.Options{NamespaceMapping: o.NamespaceMapping, Mask: sqlrewrite.MaskOptions{HashAlgo: o.HashAlgo, Dialect: o.MaskDialect}})
	for i := range f.Cases {
		c := &f.Cases[i]
		if c.Name == "" {
			c.Name = fmt.Sprintf("case %d (line %d)", i+1, c.line)
		}
		switch {
		case c.User == "":
			return nil, fmt.Errorf("%s: no user", c.Name)
		case (c.Resource == nil) == (c.SQL == ""):
			return nil, fmt.Errorf("%s: give either resource (with access) or sql", c.Name)
		case c.SQL != "" && s.snap == nil:
			return nil, fmt.Errorf("%s: a SQL case needs the tables it reads declared under catalog", c.Name)
		}
	}
	return s, nil
}

// caseLines records the line of each case, for names of unnamed cases.
func caseLines(root *yaml.Node, cases []caseDecl) {
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "cases" && m.Content[i+1].Kind == yaml.SequenceNode {
			for j, n := range m.Content[i+1].Content {
				if j < len(cases) {
					cases[j].line = n.Line
				}
			}
		}
	}
}

// Result is the outcome of one case: OK, or what differs.
type Result struct {
	Name, Kind string
	OK         bool
	Mismatches []string
}

func (s *Suite) subject(c *caseDecl) *policy.Subject {
	id := s.users[c.User]
	subj := &policy.Subject{User: c.User, Groups: id.Groups, Roles: id.Roles, Attributes: id.Attributes}
	if c.Groups != nil {
		subj.Groups = c.Groups
	}
	if c.Roles != nil {
		subj.Roles = c.Roles
	}
	if c.Attributes != nil {
		subj.Attributes = c.Attributes
	}
	return subj
}

// Run evaluates every case.
func (s *Suite) Run() []Result {
	out := make([]Result, 0, len(s.f.Cases))
	for i := range s.f.Cases {
		c := &s.f.Cases[i]
		at := s.at
		var r Result
		if c.At != "" {
			t, err := time.Parse(time.RFC3339, c.At)
			if err != nil {
				out = append(out, Result{Name: c.Name, Kind: "case", Mismatches: []string{"at: " + err.Error()}})
				continue
			}
			at = t
		}
		if c.SQL != "" {
			r = s.runSQL(c, at)
		} else {
			r = s.runResource(c, at)
		}
		r.Name = c.Name
		r.OK = len(r.Mismatches) == 0
		out = append(out, r)
	}
	return out
}

func (r *Result) check(what string, want, got any) {
	if fmt.Sprint(want) != fmt.Sprint(got) {
		r.Mismatches = append(r.Mismatches, fmt.Sprintf("%s: want %v, got %v", what, quoteIfString(want), quoteIfString(got)))
	}
}

func quoteIfString(v any) any {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return v
}

func (s *Suite) runResource(c *caseDecl, at time.Time) Result {
	r := Result{Kind: "resource"}
	subj := s.subject(c)
	res := policy.Resource{Database: c.Resource.Database, Table: c.Resource.Table, Column: c.Resource.Column, Owner: c.Resource.Owner}
	access := c.Access
	if access == "" {
		access = "select"
	}
	e := &c.Expect
	checked := false
	if e.Decision != "" || e.Policy != nil {
		checked = true
		d := s.engine.Evaluate(&policy.Request{Subject: subj, Hive: res, Access: access, At: at, Want: policy.WantAccess}).Access
		got := "deny"
		if d.Allowed {
			got = "allow"
		}
		if e.Decision != "" {
			r.check(access+" decision", strings.ToLower(e.Decision), got)
		}
		if e.Policy != nil {
			r.check(access+" policy", *e.Policy, policyID(d.PolicyID))
		}
	}
	if e.Mask != nil || e.MaskExpr != nil || e.MaskPolicy != nil {
		checked = true
		if res.Column == "" {
			r.Mismatches = append(r.Mismatches, "a mask expectation needs a column resource")
		} else {
			m := s.engine.Evaluate(&policy.Request{Subject: subj, Hive: res, At: at, Want: policy.WantMask}).Mask
			if e.Mask != nil {
				want := *e.Mask
				if strings.EqualFold(want, "none") {
					want = ""
				}
				got := m.Type
				if m.Unmappable && m.Type != "" {
					got += " (unmappable: the column is restricted)"
				}
				r.check("mask", orNone(want), orNone(got))
			}
			if e.MaskExpr != nil {
				r.check("mask-expr", *e.MaskExpr, m.ValueExpr)
			}
			if e.MaskPolicy != nil {
				r.check("mask policy", *e.MaskPolicy, policyID(m.PolicyID))
			}
		}
	}
	if e.Filter != nil || e.FilterPolicy != nil {
		checked = true
		rf := s.engine.Evaluate(&policy.Request{Subject: subj, Hive: res, At: at, Want: policy.WantRowFilter}).RowFilter
		if e.Filter != nil {
			want := *e.Filter
			if strings.EqualFold(want, "none") {
				want = ""
			}
			r.check("filter", orNone(want), orNone(strings.Join(rf.Exprs, " AND ")))
		}
		if e.FilterPolicy != nil {
			got := policyIDs{}
			for _, id := range rf.PolicyIDs {
				got = append(got, policyID(id))
			}
			r.check("filter policy", *e.FilterPolicy, got)
		}
	}
	if e.SQL != nil || e.Unchanged || e.Contains != nil || e.NotContains != nil || e.Error != "" || e.Message != "" {
		r.Mismatches = append(r.Mismatches, "sql, unchanged, contains, not-contains, error and message are expectations of SQL cases")
	}
	if !checked {
		r.Mismatches = append(r.Mismatches, "the case expects nothing (give decision, policy, mask, mask-policy, filter or filter-policy)")
	}
	return r
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func (s *Suite) runSQL(c *caseDecl, at time.Time) Result {
	r := Result{Kind: "sql"}
	subj := s.subject(c)
	path := c.SearchPath
	if path == nil {
		path = s.f.Options.SearchPath
	}
	if path == nil {
		path = []string{"$user", "public"}
	}
	sess := &sqlrewrite.Session{Subject: subj, IdentityKey: sqlrewrite.IdentityKey(subj), Database: s.f.Options.Database,
		SearchPath: path, DefaultSearchPath: []string{"$user", "public"}}
	env := &sqlrewrite.Env{Policy: policy.Snapshot{Engine: s.engine, Generation: 1}, Catalog: s.snap, Now: at}
	res := s.rw.Rewrite(context.Background(), env, sess, c.SQL)
	e := &c.Expect
	if e.Policy != nil || e.Mask != nil || e.MaskExpr != nil || e.MaskPolicy != nil || e.Filter != nil || e.FilterPolicy != nil {
		r.Mismatches = append(r.Mismatches, "policy, mask, mask-expr, mask-policy, filter and filter-policy are expectations of resource cases")
	}
	gotDecision := "allow"
	if res.Err != nil {
		gotDecision = "deny"
	}
	wantDeny := strings.EqualFold(e.Decision, "deny") || e.Error != "" || e.Message != ""
	switch {
	case e.Decision != "":
		r.check("decision", strings.ToLower(e.Decision), gotDecision)
	case wantDeny && res.Err == nil:
		r.check("decision", "deny", gotDecision)
	case !wantDeny && res.Err != nil:
		r.check("decision", "allow", gotDecision)
	}
	if res.Err != nil {
		if e.Error != "" {
			r.check("error", e.Error, res.Err.Code)
		}
		if e.Message != "" && !strings.Contains(res.Err.Message, e.Message) {
			r.Mismatches = append(r.Mismatches, fmt.Sprintf("message: want it to contain %q, got %q", e.Message, res.Err.Message))
		}
		if !wantDeny {
			r.Mismatches = append(r.Mismatches, fmt.Sprintf("denied: %s %s", res.Err.Code, res.Err.Message))
		}
		return r
	}
	got := strings.TrimSpace(res.SQL)
	// contains / not-contains also see the temporary views that DML
	// through a row filter writes to (created before the SQL).
	all := got
	for _, v := range res.Views {
		all = v.Create + ";\n" + all
	}
	if e.SQL != nil {
		r.check("sql", normSQL(*e.SQL), normSQL(got))
	}
	if e.Unchanged && res.Changed {
		r.Mismatches = append(r.Mismatches, fmt.Sprintf("want the statement unchanged, got %q", got))
	}
	for _, sub := range e.Contains {
		if !strings.Contains(all, sub) {
			r.Mismatches = append(r.Mismatches, fmt.Sprintf("want the rewritten SQL to contain %q, got %q", sub, all))
		}
	}
	for _, sub := range e.NotContains {
		if strings.Contains(all, sub) {
			r.Mismatches = append(r.Mismatches, fmt.Sprintf("want the rewritten SQL not to contain %q, got %q", sub, all))
		}
	}
	return r
}

// normSQL trims and drops a final semicolon.
func normSQL(s string) string {
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), ";"))
}
