package sqlrewrite

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/policy"
)

// numberedCatalog is testCatalog with attnums, as a dropped column leaves
// them: the third column of every relation is number 4, so an attnum is
// not a position.
func numberedCatalog() *catalog.Snapshot {
	rels := testRelations()
	for _, r := range rels {
		cols := append([]catalog.Column(nil), r.Columns...)
		for i := range cols {
			cols[i].Num = int16(i + 1)
			if i >= 2 {
				cols[i].Num++
			}
		}
		r.Columns = cols
	}
	return catalog.Static(1, rels, testCatalogFunctions)
}

// A view pgranger creates says what its columns stand for: the governed
// table's column for one it returns unchanged, nothing for a masked or
// typed-NULL one (sales.orders is id, customer, ssn, email, amount,
// region, order_date; attnums 1, 2, 4, 5, 6, 7, 8).
func TestViewOrigins(t *testing.T) {
	snap := numberedCatalog()
	apply := Options{DMLRowFilter: DMLRowFilterApply}
	cases := []struct {
		name, user, sql string
		opts            Options
		attnums         []int16
	}{
		// policy.dml-row-filter = "apply": the target is a view with CHECK
		// OPTION over every column, unmasked (masks apply in place).
		{"DML through a row filter", "bob", "UPDATE sales.orders SET amount = 0 WHERE id = 1", apply,
			[]int16{1, 2, 4, 5, 6, 7, 8}},
		{"DML through a row filter, rows returned", "bob", "DELETE FROM sales.orders o WHERE o.id = 1 RETURNING o.ssn", apply,
			[]int16{1, 2, 4, 5, 6, 7, 8}},
		{"INSERT through a row filter", "bob", "INSERT INTO sales.orders (id, customer, region) VALUES (100, 'x', 'US')", apply,
			[]int16{1, 2, 4, 5, 6, 7, 8}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := rewriteIn(t, snap, c.user, c.sql, c.opts)
			if res.Err != nil {
				t.Fatalf("%s: %v", c.sql, res.Err)
			}
			if len(res.Views) != 1 {
				t.Fatalf("%s: %d views, want 1", c.sql, len(res.Views))
			}
			v := res.Views[0]
			if v.Table != 1001 || !reflect.DeepEqual(v.Attnums, c.attnums) {
				t.Errorf("%s: view origins table %d attnums %v, want 1001 %v\n%s", c.sql, v.Table, v.Attnums, c.attnums, v.Create)
			}
		})
	}
}

// A view read through its definition has no single table to report.
func TestViewOriginsOfAnExpandedView(t *testing.T) {
	rel, ok := numberedCatalog().Lookup("sales", "orders_view")
	if !ok {
		t.Fatal("no sales.orders_view")
	}
	sel := &pg.SelectStmt{TargetList: []*pg.Node{
		pg.MakeResTargetNodeWithVal(pg.MakeColumnRefNode([]*pg.Node{pg.MakeStrNode("id")}, -1), -1),
	}}
	table, attnums := viewOrigins(&relRef{rel: rel, expanded: &pg.SelectStmt{}}, sel)
	if table != 0 || !reflect.DeepEqual(attnums, []int16{0}) {
		t.Errorf("origins of a wrapper over a view's definition: %d %v, want 0 [0]", table, attnums)
	}
}

// Every view of the golden cases says what its CREATE text says: read
// back from the text (one FROM item naming the relation, one target per
// column, the bare column under its own name when it is not masked), the
// origins are the ones sqlrewrite filled in.
func TestViewOriginsMatchTheirDefinition(t *testing.T) {
	eng := testEngine(t)
	snap := numberedCatalog()
	files, _ := filepath.Glob("testdata/rewrite/*.sql")
	views := 0
	for _, file := range files {
		for _, c := range parseCases(t, file) {
			subj := testSubjects[c.user]
			sess := &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo",
				SearchPath: c.searchPath, DefaultSearchPath: []string{"$user", "public"}}
			env := &Env{Policy: policy.Snapshot{Engine: eng, Generation: 1}, Catalog: snap, Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			res := New(c.opts).Rewrite(context.Background(), env, sess, c.sql)
			for _, v := range res.Views {
				views++
				table, attnums := originsFromText(t, v.Create, snap)
				if v.Table != table || !reflect.DeepEqual(v.Attnums, attnums) {
					t.Errorf("%s: %s\nview origins table %d attnums %v; its text says %d %v", file, c.name, v.Table, v.Attnums, table, attnums)
				}
			}
		}
	}
	if views < 10 {
		t.Errorf("only %d views in the golden cases", views)
	}
}

// originsFromText reads a view's origins from its CREATE text.
func originsFromText(t *testing.T, create string, snap *catalog.Snapshot) (uint32, []int16) {
	t.Helper()
	tree, err := pg.Parse(create)
	if err != nil {
		t.Fatalf("%v: %s", err, create)
	}
	sel := tree.Stmts[0].GetStmt().GetViewStmt().GetQuery().GetSelectStmt()
	attnums := make([]int16, len(sel.TargetList))
	from := sel.FromClause[0]
	if ts := from.GetRangeTableSample(); ts != nil {
		from = ts.Relation
	}
	rv := from.GetRangeVar()
	if rv == nil {
		return 0, attnums
	}
	rel, ok := snap.Lookup(rv.Schemaname, rv.Relname)
	if !ok {
		t.Fatalf("%s.%s is not in the catalog: %s", rv.Schemaname, rv.Relname, create)
	}
	for i, n := range sel.TargetList {
		rt := n.GetResTarget()
		cr := rt.GetVal().GetColumnRef()
		if cr == nil || len(cr.Fields) != 1 || rt.Name != "" && rt.Name != strVal(cr.Fields[0]) {
			continue
		}
		if col, ok := rel.Column(strVal(cr.Fields[0])); ok {
			attnums[i] = col.Num
		}
	}
	return rel.OID, attnums
}
