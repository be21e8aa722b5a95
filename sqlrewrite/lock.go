package sqlrewrite

import (
	pg "github.com/pganalyze/pg_query_go/v6"
)

// lockModes name LOCK's modes as PostgreSQL's grammar writes them
// (lockdefs.h: AccessShareLock = 1 … AccessExclusiveLock = 8).
var lockModes = map[int32]string{
	1: "ACCESS SHARE", 2: "ROW SHARE", 3: "ROW EXCLUSIVE", 4: "SHARE UPDATE EXCLUSIVE",
	5: "SHARE", 6: "SHARE ROW EXCLUSIVE", 7: "EXCLUSIVE", 8: "ACCESS EXCLUSIVE",
}

const accessShareLock = 1

// lockStatement allows LOCK … IN ACCESS SHARE MODE [NOWAIT] on relations
// the user may select: pg_dump locks every table it dumps so that none is
// dropped or altered under it. ACCESS SHARE is the lock any SELECT takes
// and conflicts only with ACCESS EXCLUSIVE (DROP, most ALTER TABLE), so it
// asks for what a count(*) asks for: Ranger select on the table, a
// table-level request. A view, a partition or an inheritance child maps
// to its resource as in a query (relationPolicy). Every other mode blocks
// other sessions' reads or writes, which select access does not allow,
// and is refused; so are catalog relations, which no client needs to
// lock (docs/clients.md "pg_dump: a masked dump").
func (r *stmtRewriter) lockStatement(s *pg.LockStmt) {
	user := r.sess.Subject.User
	if s.Mode != accessShareLock {
		mode, ok := lockModes[s.Mode]
		if !ok {
			mode = "this"
		}
		r.fail(denyf("LOCK … IN %s MODE is not allowed through pgranger; only ACCESS SHARE MODE, on tables the user may select (user %q)", mode, user))
		return
	}
	for _, n := range s.Relations {
		rv := n.GetRangeVar()
		if rv == nil {
			r.fail(denyf("LOCK of this kind of object is not allowed through pgranger (user %q)", user))
			return
		}
		rel := r.resolveRelation(rv)
		if rel == nil {
			return
		}
		if rel.IsSystem() {
			r.fail(denyf("LOCK of %s.%s is not allowed through pgranger: catalog relations are not locked by clients (user %q)", rel.Schema, rel.Name, user))
			return
		}
		// The backend locks exactly the relation that was checked.
		if rv.Schemaname == "" || rv.Catalogname != "" {
			rv.Schemaname, rv.Catalogname = rel.Schema, ""
			r.changed = true
		}
		p := r.relationPolicy(rel)
		if p == nil {
			return
		}
		use := ResourceUse{Database: p.resource.Database, Table: p.resource.Table, Access: "select"}
		if p.super {
			use.PolicyIDs = []int64{-1}
		} else {
			d := r.access(p.resource, "select", nil)
			if !d.Allowed {
				r.fail(accessDenied(denial(p.resource, "select", d),
					"permission denied: user %q has no select access to table %s.%s", user, rel.Schema, rel.Name))
				return
			}
			use.PolicyIDs = appendID(nil, d.PolicyID)
		}
		r.uses = append(r.uses, use)
	}
}
