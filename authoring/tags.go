package authoring

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/sqlrewrite"
	"github.com/pgranger/pgranger/sqlstate"
)

// SECURITY LABEL FOR pgranger_tags ON {COLUMN s.t.c | TABLE s.t} IS
// 'PII, GDPR': the label is the resource's whole tag set, written to
// Ranger's tag store (the tag import, op add_or_update, which replaces the
// resource's tags with the list sent) or the tag file. A tag the resource
// already has keeps its attributes; IS NULL removes every tag. Tag-based
// policies, HiveServer2 and Spark then see the same tags.
//
// Ranger Admin accepts tag writes only from an admin, so pgranger lets only
// a super user (ranger.plugin.super.users / super.groups) write them.

var tagName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.:-]*$`)

type tagPlan struct {
	pgName   string
	elements map[string]ranger.RangerPolicyResource
	types    []string // nil: remove every tag
	resource string   // for the audit record
	resType  string
}

func (st *stmtContext) tagLabel(s *pg.SecLabelStmt, label string, isNull bool) (plan, *sqlrewrite.Error) {
	schema, table, column, err := st.labelObject(s)
	if err != nil {
		return nil, err
	}
	rel, schema, table, err := st.relation(schema, table)
	if err != nil {
		return nil, err
	}
	db := st.rangerDatabase(schema)
	p := &tagPlan{pgName: schema + "." + table, elements: map[string]ranger.RangerPolicyResource{
		"database": {Values: []string{db}}, "table": {Values: []string{table}}}, resource: db + "/" + table, resType: "@table"}
	if column != "" {
		if cols := columnsOf(rel); cols != nil && !cols[column] {
			return nil, errorf(sqlstate.UndefinedColumn, "column %q of relation %q does not exist", column, table)
		}
		p.pgName += "." + column
		p.elements["column"] = ranger.RangerPolicyResource{Values: []string{column}}
		p.resource, p.resType = p.resource+"/"+column, "@column"
	}
	if isNull {
		return p, nil
	}
	seen := map[string]bool{}
	for _, part := range strings.Split(label, ",") {
		t := strings.TrimSpace(part)
		if !tagName.MatchString(t) {
			return nil, errorf(sqlstate.SyntaxError, "tag label: %q is not a tag name (letters, digits, _ . : -), in %q", t, label)
		}
		if !seen[t] {
			seen[t] = true
			p.types = append(p.types, t)
		}
	}
	return p, nil
}

func (p *tagPlan) audit(r *Result) {
	r.Resource, r.ResType, r.Access = p.resource, p.resType, "tags"
}

func (p *tagPlan) lockKeys() []string { return []string{"tags:" + p.resource} }

func (p *tagPlan) authorize(x *exec) *sqlrewrite.Error {
	if x.eng.IsSuperUser(x.req.Subject) {
		return nil
	}
	return &sqlrewrite.Error{
		Code:    sqlstate.InsufficientPrivilege,
		Message: fmt.Sprintf("pgranger: permission denied: user %q may not write the tags of %s: only a super user may write tags", x.user(), p.pgName),
		Detail:  "Ranger Admin's tag import accepts only an admin; pgranger's super users are the service's ranger.plugin.super.users and ranger.plugin.super.groups. Nothing was sent to Ranger.",
		Denied:  &sqlrewrite.Denial{Database: p.elements["database"].Values[0], Table: p.elements["table"].Values[0], Column: columnOf(p.elements), Access: "tags"},
	}
}

func columnOf(e map[string]ranger.RangerPolicyResource) string {
	if c, ok := e["column"]; ok && len(c.Values) > 0 {
		return c.Values[0]
	}
	return ""
}

func (p *tagPlan) run(ctx context.Context, x *exec) *sqlrewrite.Error {
	store := x.svc.cfg.Store
	what := "SECURITY LABEL (tags) on " + p.pgName
	st, err := store.Tags(ctx)
	if err != nil {
		return storeError(err, x.user(), what)
	}
	have := st.ResourceTags(p.elements)
	var tags []ranger.RangerTag
	for _, t := range p.types {
		tag := ranger.RangerTag{Type: t}
		for _, h := range have {
			if h.Type == t {
				tag = h // keeps its attributes
				break
			}
		}
		tags = append(tags, tag)
	}
	if err := store.SetTags(ctx, p.elements, tags); err != nil {
		return storeError(err, x.user(), what)
	}
	x.reload(ctx)
	after, err := store.Tags(ctx)
	if err != nil {
		return storeError(err, x.user(), "reading back "+what)
	}
	if got := ranger.TagTypes(after.ResourceTags(p.elements)); strings.Join(got, ",") != strings.Join(p.types, ",") {
		return withDetail(errorf(sqlstate.SerializationFailure, "could not serialize access due to concurrent update: the tags of %s are %v after the write, not %v", p.pgName, got, p.types),
			"Ranger has no optimistic concurrency: another writer changed the tags after pgranger's write.", "Run the statement again.")
	}
	return nil
}
