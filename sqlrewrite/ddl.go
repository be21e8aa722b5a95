package sqlrewrite

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/sqlstate"
)

// DDL (docs/security.md, "Mechanisms": DDL), only with policy.allow-ddl; without
// it every statement here is denied. With it, Ranger decides per
// resource, with Hive's access types:
//
//	CREATE TABLE, CREATE TABLE AS, SELECT INTO   create on the new table; CTAS inputs need select (and are rewritten)
//	ALTER TABLE, ALTER TABLE … RENAME            alter (a rename also needs create on the new name)
//	DROP TABLE / FOREIGN TABLE / MATERIALIZED VIEW  drop
//	TRUNCATE                                     update (as Hive's TRUNCATE)
//	CREATE INDEX                                 index
//	REFRESH MATERIALIZED VIEW                    update (it rewrites the view's data)
//
// As Hive blocks ALTER (hive.block.update.if.rowfilter.columnmask.specified),
// ALTER TABLE, CREATE INDEX, REFRESH and TRUNCATE are denied on a relation
// with a row filter or a mask for the user: validating a constraint,
// building an index or rewriting a column evaluates expressions over every
// stored row, hidden ones included, and their errors would be an oracle.
// For the same reason a column an ALTER or CREATE INDEX reads (SET NOT
// NULL, ALTER TYPE … USING, CHECK, UNIQUE, index keys and predicates)
// needs select access. What cannot be mapped to one Ranger resource, or
// would move data between resources, is denied: temporary tables (they
// would shadow governed ones), PARTITION OF / INHERITS / ATTACH / DETACH
// (a child takes its root's policies), CASCADE (it reaches other
// resources), OWNER TO (it changes {OWNER}), row-level security and
// trigger switches, SET SCHEMA, and CREATE VIEW / CREATE MATERIALIZED VIEW:
// inside a view's definition pgranger does not check access again (a
// view is how an administrator exposes part of a table), so a view a user
// could create would launder what the user may not read.

func (r *stmtRewriter) ddlOff(kind StatementKind) *Error {
	return denyf("%s statements are not allowed through pgranger: policy.allow-ddl is off (user %q)", kind, r.sess.Subject.User)
}

func (r *stmtRewriter) ddlStatement(n *pg.Node) {
	kind := statementKind(n)
	user := r.sess.Subject.User
	switch v := n.Node.(type) {
	case *pg.Node_CreateTableAsStmt:
		if v.CreateTableAsStmt.Objtype == pg.ObjectType_OBJECT_MATVIEW {
			r.fail(denyf("CREATE MATERIALIZED VIEW is not allowed through pgranger: inside a view's definition access is not checked again, so a view created by a user would launder what the user may not read (user %q)", user))
			return
		}
	case *pg.Node_ViewStmt:
		r.fail(denyf("CREATE VIEW is not allowed through pgranger: inside a view's definition access is not checked again, so a view created by a user would launder what the user may not read (user %q)", user))
		return
	}
	if !r.rw.opts.AllowDDL {
		r.fail(r.ddlOff(kind))
		return
	}
	switch v := n.Node.(type) {
	case *pg.Node_CreateTableAsStmt:
		r.createTableAs(v.CreateTableAsStmt)
	case *pg.Node_CreateStmt:
		r.createTable(v.CreateStmt)
	case *pg.Node_DropStmt:
		r.dropStatement(v.DropStmt)
	case *pg.Node_TruncateStmt:
		r.truncateStatement(v.TruncateStmt)
	case *pg.Node_AlterTableStmt:
		r.alterTable(v.AlterTableStmt)
	case *pg.Node_RenameStmt:
		r.renameStatement(v.RenameStmt)
	case *pg.Node_IndexStmt:
		r.createIndex(v.IndexStmt)
	case *pg.Node_RefreshMatViewStmt:
		r.refreshMatView(v.RefreshMatViewStmt)
	default:
		r.fail(denyf("%s statements are not allowed through pgranger (user %q)", kind, user))
	}
	r.finishIfOK()
}

// newRelation checks create access for a relation a statement creates and
// qualifies its name with the schema PostgreSQL would create it in.
func (r *stmtRewriter) newRelation(rv *pg.RangeVar, kind string) bool {
	user := r.sess.Subject.User
	if rv == nil {
		r.fail(errorf(sqlstate.FeatureNotSupported, "%s without a name", kind))
		return false
	}
	if rv.Relpersistence == "t" || rv.Schemaname == "pg_temp" || len(rv.Schemaname) > 8 && rv.Schemaname[:8] == "pg_temp_" {
		r.fail(denyf("temporary tables are not allowed through pgranger: they would shadow governed tables (user %q)", user))
		return false
	}
	if rv.Catalogname != "" && rv.Catalogname != r.sess.Database {
		r.fail(errorf(sqlstate.FeatureNotSupported, "cross-database references are not implemented: %s.%s.%s", rv.Catalogname, rv.Schemaname, rv.Relname))
		return false
	}
	rv.Catalogname = ""
	if rv.Schemaname == "" {
		schema, err := r.creationSchema()
		if err != nil {
			r.fail(err)
			return false
		}
		rv.Schemaname = schema
		r.changed = true
	}
	if catalog.IsSystemSchema(rv.Schemaname) {
		r.fail(denyf("%s in %s is not allowed through pgranger (user %q)", kind, rv.Schemaname, user))
		return false
	}
	if !r.policiesUsable(rv.Schemaname + "." + rv.Relname) {
		return false
	}
	r.governed = true
	res := policy.Resource{Database: r.rangerDatabase(rv.Schemaname), Table: rv.Relname}
	if d := r.access(res, "create", nil); !d.Allowed && !r.env.Policy.Engine.IsSuperUser(r.sess.Subject) {
		r.fail(accessDenied(denial(res, "create", d),
			"permission denied: user %q has no create access to table %s.%s (%s)", user, rv.Schemaname, rv.Relname, kind))
		return false
	}
	return true
}

// policiesUsable fails (and reports false) when no trustworthy policies
// are loaded.
func (r *stmtRewriter) policiesUsable(what string) bool {
	user := r.sess.Subject.User
	switch {
	case r.env.Policy.Unavailable != "":
		r.fail(denyf("policies are unavailable (%s): access to %s denied for user %q", r.env.Policy.Unavailable, what, user))
		return false
	case r.env.Policy.Engine == nil:
		r.fail(denyf("no policies are loaded: access to %s denied for user %q", what, user))
		return false
	}
	return true
}

// creationSchema is where PostgreSQL creates an unqualified relation: the
// first schema of the search_path that exists. A path that puts pg_temp
// or pg_catalog first is refused (the relation would be temporary, or a
// system one).
func (r *stmtRewriter) creationSchema() (string, *Error) {
	for _, s := range r.searchPath {
		if s == "$user" {
			s = r.sess.Subject.User
		}
		switch {
		case s == "pg_temp" || len(s) > 8 && s[:8] == "pg_temp_":
			return "", denyf("the search_path names pg_temp first, so the new table would be temporary; temporary tables are not allowed through pgranger (user %q)", r.sess.Subject.User)
		case s == "pg_catalog":
			return "", denyf("the search_path names pg_catalog first; qualify the new table's name (user %q)", r.sess.Subject.User)
		case r.snap.SchemaExists(s):
			return s, nil
		}
	}
	return "", &Error{Code: sqlstate.InvalidSchemaName, Message: "no schema has been selected to create in"}
}

// createTableAs handles CREATE TABLE … AS (also … AS EXECUTE).
func (r *stmtRewriter) createTableAs(c *pg.CreateTableAsStmt) {
	if c.Objtype != pg.ObjectType_OBJECT_TABLE {
		r.fail(denyf("%s is not allowed through pgranger (user %q)", "CREATE MATERIALIZED VIEW", r.sess.Subject.User))
		return
	}
	if !r.rw.opts.AllowDDL {
		r.fail(r.ddlOff("CREATE TABLE AS"))
		return
	}
	if c.Into == nil || !r.newRelation(c.Into.Rel, "CREATE TABLE AS") {
		return
	}
	if c.Query == nil {
		r.fail(errorf(sqlstate.FeatureNotSupported, "CREATE TABLE AS without a query"))
		return
	}
	switch c.Query.Node.(type) {
	case *pg.Node_SelectStmt, *pg.Node_ExecuteStmt:
		r.query(c.Query)
	default:
		r.fail(denyf("CREATE TABLE AS %s is not allowed through pgranger (user %q)", statementKind(c.Query), r.sess.Subject.User))
	}
}

// selectInto handles SELECT … INTO t (into: the SELECT carrying INTO),
// CREATE TABLE AS by another name.
func (r *stmtRewriter) selectInto(s, into *pg.SelectStmt) {
	if !r.rw.opts.AllowDDL {
		r.fail(r.ddlOff("SELECT INTO"))
		return
	}
	ic := into.IntoClause
	if !r.newRelation(ic.Rel, "SELECT INTO") {
		return
	}
	into.IntoClause = nil
	r.selectStatement(s, nil)
	into.IntoClause = ic
}

// createTable handles CREATE TABLE with columns and constraints.
func (r *stmtRewriter) createTable(c *pg.CreateStmt) {
	user := r.sess.Subject.User
	switch {
	case c.Partbound != nil || len(c.InhRelations) > 0:
		r.fail(denyf("CREATE TABLE … PARTITION OF / INHERITS is not allowed through pgranger: a child table takes the policies of its root (user %q)", user))
		return
	case c.OfTypename != nil:
		r.fail(denyf("CREATE TABLE … OF type is not allowed through pgranger (user %q)", user))
		return
	}
	if !r.newRelation(c.Relation, "CREATE TABLE") {
		return
	}
	for _, e := range c.TableElts {
		switch v := e.Node.(type) {
		case *pg.Node_ColumnDef:
			r.columnDef(v.ColumnDef, nil)
		case *pg.Node_Constraint:
			r.constraint(v.Constraint, nil)
		case *pg.Node_TableLikeClause:
			// LIKE copies a definition (and with INCLUDING DEFAULTS its
			// expressions), no data: table-level select on the source.
			rel := r.resolveRelation(v.TableLikeClause.Relation)
			if rel == nil {
				return
			}
			r.qualify(v.TableLikeClause.Relation, rel)
			if !rel.IsSystem() {
				if p := r.relationPolicy(rel); p != nil && !p.super {
					if d := r.access(p.resource, "select", nil); !d.Allowed {
						e := denyf("permission denied: user %q has no select access to table %s.%s (CREATE TABLE … LIKE)", user, rel.Schema, rel.Name)
						e.Denied = &Denial{Database: p.resource.Database, Table: p.resource.Table, Access: "select", PolicyID: d.PolicyID}
						r.fail(e)
						return
					}
				}
			}
		default:
			r.fail(errorf(sqlstate.FeatureNotSupported, "unsupported CREATE TABLE element"))
			return
		}
		if r.err != nil {
			return
		}
	}
	for _, con := range c.Constraints {
		r.constraint(con.GetConstraint(), nil)
	}
	// Partition key expressions run for every row written later.
	if c.Partspec != nil {
		r.exprs(&scope{}, c.Partspec)
	}
}

func (r *stmtRewriter) qualify(rv *pg.RangeVar, rel *catalog.Relation) {
	if rv.Schemaname == "" {
		rv.Schemaname = rel.Schema
		r.changed = true
	}
	rv.Catalogname = ""
}

// columnDef checks a column definition: its default, generation
// expression and constraints follow the function rule; a REFERENCES
// constraint needs what a foreign key needs. on is the table an ALTER
// adds the column to (nil for CREATE TABLE).
func (r *stmtRewriter) columnDef(cd *pg.ColumnDef, on *relRef) {
	if cd == nil {
		return
	}
	r.exprs(&scope{}, cd.RawDefault)
	for _, c := range cd.Constraints {
		r.constraint(c.GetConstraint(), on)
	}
}

// constraint checks a table or column constraint. Expressions follow the
// function rule; on an existing table (on) the constraint is validated
// over its stored rows, so the columns it reads need select access. A
// foreign key probes the referenced table for every row written, which
// would reveal rows a row filter hides: it needs select on the referenced
// columns and no row filter on that table.
func (r *stmtRewriter) constraint(c *pg.Constraint, on *relRef) {
	if c == nil || r.err != nil {
		return
	}
	user := r.sess.Subject.User
	switch c.Contype {
	case pg.ConstrType_CONSTR_EXCLUSION:
		r.fail(denyf("EXCLUDE constraints are not allowed through pgranger (user %q)", user))
		return
	case pg.ConstrType_CONSTR_FOREIGN:
		r.foreignKey(c)
		if on != nil {
			r.readColumns(on, nameList(c.FkAttrs))
		}
	}
	sc := &scope{}
	if on != nil {
		sc.items = []*fromItem{{visible: on.rel.Name, ref: on}}
		r.readColumns(on, nameList(c.Keys))
		r.readColumns(on, nameList(c.Including))
	}
	r.exprs(sc, c.RawExpr, c.WhereClause)
}

func (r *stmtRewriter) foreignKey(c *pg.Constraint) {
	user := r.sess.Subject.User
	rel := r.resolveRelation(c.Pktable)
	if rel == nil {
		return
	}
	r.qualify(c.Pktable, rel)
	if rel.IsSystem() {
		r.fail(denyf("a foreign key to %s.%s is not allowed through pgranger (user %q)", rel.Schema, rel.Name, user))
		return
	}
	p := r.relationPolicy(rel)
	if p == nil || p.super {
		return
	}
	if len(p.filter.Exprs) > 0 {
		r.fail(denyf("a foreign key to %s.%s is not allowed for user %q: a row filter applies to it, and the key checks would reveal the rows it hides", rel.Schema, rel.Name, user))
		return
	}
	cols := nameList(c.PkAttrs)
	if len(cols) == 0 {
		if d := r.access(p.resource, "select", nil); !d.Allowed {
			e := denyf("permission denied: user %q has no select access to table %s.%s (foreign key)", user, rel.Schema, rel.Name)
			e.Denied = &Denial{Database: p.resource.Database, Table: p.resource.Table, Access: "select", PolicyID: d.PolicyID}
			r.fail(e)
		}
		return
	}
	for _, name := range cols {
		for i, col := range rel.Columns {
			if col.Name == name && !p.colAccess[i].Allowed {
				e := denyf("permission denied: user %q has no select access to column %s.%s.%s (foreign key)", user, rel.Schema, rel.Name, name)
				e.Denied = &Denial{Database: p.resource.Database, Table: p.resource.Table, Column: name, Access: "select", PolicyID: p.colAccess[i].PolicyID}
				r.fail(e)
				return
			}
		}
	}
}

// readColumns marks columns of an existing table a DDL statement reads.
func (r *stmtRewriter) readColumns(ref *relRef, names []string) {
	for _, n := range names {
		ref.markVisible(n)
	}
}

// ddlTarget resolves the existing table a DDL statement acts on and
// records it; access is checked in finish (finishDDL).
func (r *stmtRewriter) ddlTarget(rv *pg.RangeVar, kind, access string, kinds ...byte) *relRef {
	user := r.sess.Subject.User
	rel := r.resolveRelation(rv)
	if rel == nil {
		return nil
	}
	r.qualify(rv, rel)
	if rel.IsSystem() {
		r.fail(denyf("%s on %s.%s is not allowed through pgranger (user %q)", kind, rel.Schema, rel.Name, user))
		return nil
	}
	ok := false
	for _, k := range kinds {
		ok = ok || rel.Kind == k
	}
	if !ok {
		r.fail(denyf("%s on %s.%s is not allowed through pgranger: it is not a relation of the kind %s acts on (user %q)", kind, rel.Schema, rel.Name, kind, user))
		return nil
	}
	pol := r.relationPolicy(rel)
	if pol == nil {
		return nil
	}
	ref := &relRef{rel: rel, pol: pol, rv: rv, unaliased: true, read: map[int]bool{},
		dml: &dmlTarget{kind: kind, written: map[int]bool{}, access: access}}
	ref.visibleCols = make([]string, len(rel.Columns))
	for i, c := range rel.Columns {
		ref.visibleCols[i] = c.Name
	}
	r.refs = append(r.refs, ref)
	return ref
}

var tableKinds = []byte{catalog.KindTable, catalog.KindPartitionedTable, catalog.KindForeignTable}

func (r *stmtRewriter) dropStatement(d *pg.DropStmt) {
	user := r.sess.Subject.User
	var kinds []byte
	switch d.RemoveType {
	case pg.ObjectType_OBJECT_TABLE:
		kinds = []byte{catalog.KindTable, catalog.KindPartitionedTable}
	case pg.ObjectType_OBJECT_FOREIGN_TABLE:
		kinds = []byte{catalog.KindForeignTable}
	case pg.ObjectType_OBJECT_MATVIEW:
		kinds = []byte{catalog.KindMatView}
	case pg.ObjectType_OBJECT_VIEW:
		kinds = []byte{catalog.KindView}
	default:
		r.fail(denyf("DROP %s is not allowed through pgranger (user %q)", objectTypeName(d.RemoveType), user))
		return
	}
	if d.Behavior == pg.DropBehavior_DROP_CASCADE {
		r.fail(denyf("DROP … CASCADE is not allowed through pgranger: it drops other resources (user %q)", user))
		return
	}
	for _, o := range d.Objects {
		names := nameList(o.GetList().GetItems())
		rv := &pg.RangeVar{Relpersistence: "p", Inh: true}
		switch len(names) {
		case 1:
			rv.Relname = names[0]
		case 2:
			rv.Schemaname, rv.Relname = names[0], names[1]
		case 3:
			rv.Catalogname, rv.Schemaname, rv.Relname = names[0], names[1], names[2]
		default:
			r.fail(errorf(sqlstate.FeatureNotSupported, "unsupported name in DROP"))
			return
		}
		if d.MissingOk && !r.exists(rv) {
			// IF EXISTS of a name pgranger does not know: PostgreSQL only
			// notices, unless the relation appeared since the catalog was
			// read; then it must be one the user may drop.
			if !r.missingRelationAccess(rv, "DROP "+objectTypeName(d.RemoveType), "drop") {
				return
			}
			continue
		}
		ref := r.ddlTarget(rv, "DROP "+objectTypeName(d.RemoveType), "drop", kinds...)
		if ref == nil {
			return
		}
		o.GetList().Items = []*pg.Node{pg.MakeStrNode(rv.Schemaname), pg.MakeStrNode(rv.Relname)}
		r.changed = true
	}
}

// exists reports whether rv names a relation, without failing.
func (r *stmtRewriter) exists(rv *pg.RangeVar) bool {
	if rv.Schemaname != "" {
		if _, ok := r.snap.Lookup(rv.Schemaname, rv.Relname); ok {
			return true
		}
	} else if _, ok := r.snap.Resolve(rv.Relname, r.searchPath, r.sess.Subject.User); ok {
		return true
	}
	if r.env.Refresh != nil {
		if s, err := r.env.Refresh(r.ctx); err == nil && s != nil {
			r.snap = s
			if rv.Schemaname != "" {
				_, ok := s.Lookup(rv.Schemaname, rv.Relname)
				return ok
			}
			_, ok := s.Resolve(rv.Relname, r.searchPath, r.sess.Subject.User)
			return ok
		}
	}
	return false
}

// missingRelationAccess checks an IF EXISTS statement on a relation
// pgranger's catalog does not have: access on the resource its name would
// be, in each schema the backend could find it in (the qualified one, or
// every schema of the search_path). It reports whether access is granted.
func (r *stmtRewriter) missingRelationAccess(rv *pg.RangeVar, kind, access string) bool {
	if !r.policiesUsable(rv.Relname) {
		return false
	}
	eng := r.env.Policy.Engine
	if eng.IsSuperUser(r.sess.Subject) {
		return true
	}
	schemas := []string{rv.Schemaname}
	if rv.Schemaname == "" {
		schemas = nil
		for _, s := range catalog.EffectivePath(r.searchPath, r.sess.Subject.User) {
			if !catalog.IsSystemSchema(s) {
				schemas = append(schemas, s)
			}
		}
	}
	for _, s := range schemas {
		res := policy.Resource{Database: r.rangerDatabase(s), Table: rv.Relname}
		if d := r.access(res, access, nil); !d.Allowed {
			r.fail(accessDenied(denial(res, access, d),
				"permission denied: user %q has no %s access to table %s.%s (%s)", r.sess.Subject.User, access, s, rv.Relname, kind))
			return false
		}
	}
	r.governed = true
	return true
}

func objectTypeName(t pg.ObjectType) string {
	switch t {
	case pg.ObjectType_OBJECT_TABLE:
		return "TABLE"
	case pg.ObjectType_OBJECT_FOREIGN_TABLE:
		return "FOREIGN TABLE"
	case pg.ObjectType_OBJECT_MATVIEW:
		return "MATERIALIZED VIEW"
	case pg.ObjectType_OBJECT_VIEW:
		return "VIEW"
	case pg.ObjectType_OBJECT_INDEX:
		return "INDEX"
	case pg.ObjectType_OBJECT_SCHEMA:
		return "SCHEMA"
	case pg.ObjectType_OBJECT_SEQUENCE:
		return "SEQUENCE"
	case pg.ObjectType_OBJECT_FUNCTION:
		return "FUNCTION"
	case pg.ObjectType_OBJECT_COLUMN:
		return "COLUMN"
	}
	name := t.String()
	if len(name) > 7 && name[:7] == "OBJECT_" {
		name = name[7:]
	}
	return name
}

func (r *stmtRewriter) truncateStatement(t *pg.TruncateStmt) {
	if t.Behavior == pg.DropBehavior_DROP_CASCADE {
		r.fail(denyf("TRUNCATE … CASCADE is not allowed through pgranger: it truncates other resources (user %q)", r.sess.Subject.User))
		return
	}
	for _, n := range t.Relations {
		rv := n.GetRangeVar()
		if rv == nil {
			r.fail(errorf(sqlstate.FeatureNotSupported, "unsupported TRUNCATE target"))
			return
		}
		if r.dmlTargetItem(rv, "TRUNCATE") == nil {
			return
		}
	}
}

// alterTable handles ALTER TABLE with the subcommands below; any other
// is denied.
func (r *stmtRewriter) alterTable(a *pg.AlterTableStmt) {
	user := r.sess.Subject.User
	if a.Objtype != pg.ObjectType_OBJECT_TABLE {
		r.fail(denyf("ALTER %s is not allowed through pgranger (user %q)", objectTypeName(a.Objtype), user))
		return
	}
	if a.MissingOk && !r.exists(a.Relation) {
		r.missingRelationAccess(a.Relation, "ALTER TABLE", "alter")
		return
	}
	ref := r.ddlTarget(a.Relation, "ALTER TABLE", "alter", tableKinds...)
	if ref == nil {
		return
	}
	ref.dml.blockIfGoverned = true
	for _, c := range a.Cmds {
		cmd := c.GetAlterTableCmd()
		if cmd == nil {
			r.fail(errorf(sqlstate.FeatureNotSupported, "unexpected ALTER TABLE command"))
			return
		}
		if cmd.Behavior == pg.DropBehavior_DROP_CASCADE {
			r.fail(denyf("ALTER TABLE … CASCADE is not allowed through pgranger: it reaches other resources (user %q)", user))
			return
		}
		switch cmd.Subtype {
		case pg.AlterTableType_AT_AddColumn:
			r.columnDef(cmd.Def.GetColumnDef(), ref)
		case pg.AlterTableType_AT_ColumnDefault:
			r.exprs(&scope{}, cmd.Def)
		case pg.AlterTableType_AT_SetNotNull:
			// Validated over every stored row.
			r.readColumns(ref, []string{cmd.Name})
		case pg.AlterTableType_AT_AlterColumnType:
			// Every stored value is converted, by USING or a cast.
			r.readColumns(ref, []string{cmd.Name})
			if cd := cmd.Def.GetColumnDef(); cd != nil {
				sc := &scope{items: []*fromItem{{visible: ref.rel.Name, ref: ref}}}
				r.exprs(sc, cd.RawDefault)
			}
		case pg.AlterTableType_AT_AddConstraint:
			r.constraint(cmd.Def.GetConstraint(), ref)
		case pg.AlterTableType_AT_DropColumn, pg.AlterTableType_AT_DropNotNull, pg.AlterTableType_AT_DropConstraint,
			pg.AlterTableType_AT_SetStatistics, pg.AlterTableType_AT_SetOptions, pg.AlterTableType_AT_ResetOptions,
			pg.AlterTableType_AT_SetStorage, pg.AlterTableType_AT_SetCompression, pg.AlterTableType_AT_AlterConstraint,
			pg.AlterTableType_AT_ClusterOn, pg.AlterTableType_AT_DropCluster, pg.AlterTableType_AT_SetLogged,
			pg.AlterTableType_AT_SetUnLogged, pg.AlterTableType_AT_SetTableSpace, pg.AlterTableType_AT_SetRelOptions,
			pg.AlterTableType_AT_ResetRelOptions, pg.AlterTableType_AT_ReplicaIdentity, pg.AlterTableType_AT_AddIdentity,
			pg.AlterTableType_AT_SetIdentity, pg.AlterTableType_AT_DropIdentity:
			if cmd.Def != nil {
				r.exprs(&scope{}, cmd.Def)
			}
		default:
			r.fail(denyf("ALTER TABLE … %s is not allowed through pgranger (user %q)", alterName(cmd.Subtype), user))
			return
		}
		if r.err != nil {
			return
		}
	}
}

func alterName(t pg.AlterTableType) string {
	switch t {
	case pg.AlterTableType_AT_ChangeOwner:
		return "OWNER TO"
	case pg.AlterTableType_AT_EnableRowSecurity, pg.AlterTableType_AT_DisableRowSecurity,
		pg.AlterTableType_AT_ForceRowSecurity, pg.AlterTableType_AT_NoForceRowSecurity:
		return "ROW LEVEL SECURITY"
	case pg.AlterTableType_AT_AttachPartition:
		return "ATTACH PARTITION"
	case pg.AlterTableType_AT_DetachPartition, pg.AlterTableType_AT_DetachPartitionFinalize:
		return "DETACH PARTITION"
	case pg.AlterTableType_AT_AddInherit, pg.AlterTableType_AT_DropInherit:
		return "INHERIT"
	case pg.AlterTableType_AT_ValidateConstraint:
		return "VALIDATE CONSTRAINT"
	}
	name := t.String()
	if len(name) > 3 && name[:3] == "AT_" {
		name = name[3:]
	}
	return name
}

// renameStatement handles ALTER TABLE … RENAME [COLUMN|CONSTRAINT]. A
// table renamed is a new Ranger resource: create on the new name too. A
// column renamed leaves the policies that name it, so it must be one the
// user may read.
func (r *stmtRewriter) renameStatement(s *pg.RenameStmt) {
	user := r.sess.Subject.User
	switch {
	case s.RenameType == pg.ObjectType_OBJECT_TABLE:
	case (s.RenameType == pg.ObjectType_OBJECT_COLUMN || s.RenameType == pg.ObjectType_OBJECT_TABCONSTRAINT) && s.RelationType == pg.ObjectType_OBJECT_TABLE:
	default:
		r.fail(denyf("ALTER … RENAME of a %s is not allowed through pgranger (user %q)", objectTypeName(s.RenameType), user))
		return
	}
	if s.MissingOk && !r.exists(s.Relation) {
		r.missingRelationAccess(s.Relation, "ALTER TABLE", "alter")
		return
	}
	ref := r.ddlTarget(s.Relation, "ALTER TABLE", "alter", tableKinds...)
	if ref == nil {
		return
	}
	ref.dml.blockIfGoverned = true
	switch s.RenameType {
	case pg.ObjectType_OBJECT_TABLE:
		nrv := &pg.RangeVar{Schemaname: ref.rel.Schema, Relname: s.Newname, Relpersistence: "p"}
		r.newRelation(nrv, "ALTER TABLE … RENAME")
	case pg.ObjectType_OBJECT_COLUMN:
		r.readColumns(ref, []string{s.Subname})
	}
}

func (r *stmtRewriter) createIndex(ix *pg.IndexStmt) {
	ref := r.ddlTarget(ix.Relation, "CREATE INDEX", "index", catalog.KindTable, catalog.KindPartitionedTable, catalog.KindMatView)
	if ref == nil {
		return
	}
	ref.dml.blockIfGoverned = true
	sc := &scope{items: []*fromItem{{visible: ref.rel.Name, ref: ref}}}
	for _, p := range append(append([]*pg.Node{}, ix.IndexParams...), ix.IndexIncludingParams...) {
		if el := p.GetIndexElem(); el != nil {
			if el.Name != "" {
				r.readColumns(ref, []string{el.Name})
			}
			r.exprs(sc, el.Expr)
		}
	}
	r.exprs(sc, ix.WhereClause)
}

func (r *stmtRewriter) refreshMatView(s *pg.RefreshMatViewStmt) {
	ref := r.ddlTarget(s.Relation, "REFRESH MATERIALIZED VIEW", "update", catalog.KindMatView)
	if ref != nil {
		ref.dml.blockIfGoverned = true
	}
}
