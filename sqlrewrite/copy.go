package sqlrewrite

import (
	pg "github.com/pganalyze/pg_query_go/v6"
)

// copyStatement handles COPY … TO STDOUT (DESIGN §6 statement classes): a
// table becomes COPY (SELECT cols FROM table) TO STDOUT so it goes through
// the same analysis and wrappers as any query, and COPY (query) TO STDOUT
// has its query rewritten. The options (format, header, delimiter…) stay
// as written. COPY FROM, and COPY to or from a server file or program, are
// denied.
func (r *stmtRewriter) copyStatement(c *pg.CopyStmt) {
	user := r.sess.Subject.User
	switch {
	case c.IsFrom:
		r.fail(denyf("COPY … FROM is not allowed through pgranger (user %q)", user))
		return
	case c.IsProgram || c.Filename != "":
		r.fail(denyf("COPY to a server file or program is not allowed through pgranger; use COPY … TO STDOUT (user %q)", user))
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
		rv.Inh = false // COPY table reads only that table, as ONLY does
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
