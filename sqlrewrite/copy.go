package sqlrewrite

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/catalog"
)

// copyStatement handles COPY … TO STDOUT (docs/security.md, "Mechanisms";
// docs/clients.md for pg_dump): a
// table becomes COPY (SELECT cols FROM table) TO STDOUT so it goes through
// the same analysis and wrappers as any query, and COPY (query) TO STDOUT
// has its query rewritten (a partitioned table: every partition, see
// below). The options (format, header, delimiter…) stay
// as written. COPY table FROM STDIN is a write (dml.go): update access on
// the table and each column loaded. COPY to or from a server file or
// program is denied.
func (r *stmtRewriter) copyStatement(c *pg.CopyStmt) {
	user := r.sess.Subject.User
	switch {
	case c.IsProgram || c.Filename != "":
		r.fail(denyf("COPY to or from a server file or program is not allowed through pgranger; use COPY … TO STDOUT or FROM STDIN (user %q)", user))
		return
	case c.IsFrom:
		r.copyFrom(c)
		return
	}
	sel := c.Query.GetSelectStmt()
	if c.Relation != nil {
		targets := []*pg.Node{pg.MakeResTargetNodeWithVal(pg.MakeColumnRefNode([]*pg.Node{pg.MakeAStarNode()}, -1), -1)}
		if len(c.Attlist) > 0 {
			targets = targets[:0]
			for _, a := range c.Attlist {
				targets = append(targets, pg.MakeResTargetNodeWithVal(pg.MakeColumnRefNode([]*pg.Node{pg.MakeStrNode(strVal(a))}, -1), -1))
			}
		}
		rv := c.Relation
		rel := r.resolveRelation(rv)
		if rel == nil {
			return
		}
		// COPY table TO reads the table's own rows, not those of its
		// inheritance children: ONLY. A partitioned table has no rows of
		// its own (PostgreSQL refuses to COPY it and suggests
		// COPY (SELECT * FROM t) TO); ONLY would copy nothing, silently,
		// so its copy reads every partition, as that query does.
		rv.Inh = rel.Kind == catalog.KindPartitionedTable
		sel = &pg.SelectStmt{
			TargetList:  targets,
			FromClause:  []*pg.Node{{Node: &pg.Node_RangeVar{RangeVar: rv}}},
			LimitOption: pg.LimitOption_LIMIT_OPTION_DEFAULT,
			Op:          pg.SetOperation_SETOP_NONE,
		}
		c.Relation, c.Attlist = nil, nil
		c.Query = &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel}}
		r.changed = true
	}
	if sel == nil {
		r.fail(denyf("COPY of this kind of statement is not allowed through pgranger (user %q)", user))
		return
	}
	r.selectStatement(sel, nil)
	if r.err == nil {
		r.finish()
	}
}

// copyFrom checks COPY table [(cols)] FROM STDIN: a write of the listed
// columns (every column without a list). Its WHERE clause reads the rows
// being loaded, not stored ones, so it needs no select access; its
// functions follow the function rule.
func (r *stmtRewriter) copyFrom(c *pg.CopyStmt) {
	target := r.dmlTargetItem(c.Relation, "COPY")
	if target == nil {
		return
	}
	t := target.ref.dml
	if len(c.Attlist) == 0 {
		t.writeAll(target.ref)
	}
	for _, a := range c.Attlist {
		t.write(target.ref, strVal(a))
	}
	r.exprs(&scope{items: []*fromItem{{visible: target.visible}}}, c.WhereClause)
	if r.err == nil {
		r.finish()
	}
}
