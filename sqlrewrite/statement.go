package sqlrewrite

import (
	"context"
	"reflect"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/policy"
)

// stmtRewriter holds the state of one statement's analysis. It is used by
// one goroutine and thrown away after the statement.
type stmtRewriter struct {
	rw   *Rewriter
	ctx  context.Context
	env  *Env
	sess *Session
	snap *catalog.Snapshot

	searchPath    []string
	newSearchPath []string // set by SET/RESET search_path, DISCARD ALL

	changed        bool
	governed       bool
	constDependent bool   // the analysis read a constant's value (Result.constDependent)
	inPolicyExpr   bool   // walking a trusted policy expression, not user SQL
	trusted        int    // depth of view definitions being expanded (not user SQL)
	err            *Error // first error found while walking; stops further work

	// setConfigs are the set_config calls of a statement recognised whole
	// (setconfig.go), with the setting each one sets.
	setConfigs map[*pg.FuncCall]string
	uses       []ResourceUse // audit records of references not in refs (LOCK)

	curCol *pg.Node     // the column reference being resolved (dml.go)
	prep   *prepOverlay // SQL prepared statements of the text (prepare.go)

	rels  map[uint32]*relPolicy // decisions per relation, computed once
	views []View                // views DML through a row filter writes to (dml.go)
	refs  []*relRef             // governed relation references, in order of appearance
	bar   *barrierState         // what the barrier decision needs (barrier.go)

	reqCtx *policy.RequestContext // conditions' request context (reqcontext.go)
}

// markConstDependent notes that the analysis of user SQL read a constant's
// value: a literal template of the statement stands for nothing
// (template.go). Constants of policy expressions and view definitions
// are not the user's and never become placeholders.
func (r *stmtRewriter) markConstDependent() {
	if !r.inPolicyExpr && r.trusted == 0 {
		r.constDependent = true
	}
}

// fail records the first error; walkers check r.err and stop.
func (r *stmtRewriter) fail(e *Error) {
	if r.err == nil {
		r.err = e
	}
}

// Statement classes (docs/security.md, "Mechanisms"). Each entry says what happens to a kind;
// anything not listed is denied, so a statement kind added by a future
// grammar is refused until someone decides what it needs.
const (
	classRewrite = iota // analysed and rewritten: SELECT, VALUES, TABLE, WITH …, SELECT INTO
	classPass           // forwarded as written; touches no governed data
	classSet            // SET/RESET: checked against the settings list (settings.go), search_path tracked
	classCopy           // COPY … TO STDOUT: its query is rewritten; FROM STDIN is a write (copy.go)
	classDeclare        // DECLARE CURSOR: its query is rewritten
	classDML            // INSERT, UPDATE, DELETE, MERGE (dml.go)
	classExplain        // EXPLAIN: its statement is analysed (explain.go)
	classPrepare        // PREPARE, EXECUTE, DEALLOCATE (prepare.go)
	classDDL            // CREATE TABLE [AS], ALTER TABLE, DROP, TRUNCATE, … with policy.allow-ddl (ddl.go)
	classLock           // LOCK … IN ACCESS SHARE MODE on relations the user may select (lock.go)
)

var statementClasses = map[reflect.Type]int{
	reflect.TypeOf(&pg.Node_SelectStmt{}):         classRewrite,
	reflect.TypeOf(&pg.Node_VariableSetStmt{}):    classSet,
	reflect.TypeOf(&pg.Node_DeclareCursorStmt{}):  classDeclare,
	reflect.TypeOf(&pg.Node_CopyStmt{}):           classCopy,
	reflect.TypeOf(&pg.Node_InsertStmt{}):         classDML,
	reflect.TypeOf(&pg.Node_UpdateStmt{}):         classDML,
	reflect.TypeOf(&pg.Node_DeleteStmt{}):         classDML,
	reflect.TypeOf(&pg.Node_MergeStmt{}):          classDML,
	reflect.TypeOf(&pg.Node_ExplainStmt{}):        classExplain,
	reflect.TypeOf(&pg.Node_PrepareStmt{}):        classPrepare,
	reflect.TypeOf(&pg.Node_ExecuteStmt{}):        classPrepare,
	reflect.TypeOf(&pg.Node_DeallocateStmt{}):     classPrepare,
	reflect.TypeOf(&pg.Node_CreateTableAsStmt{}):  classDDL,
	reflect.TypeOf(&pg.Node_CreateStmt{}):         classDDL,
	reflect.TypeOf(&pg.Node_DropStmt{}):           classDDL,
	reflect.TypeOf(&pg.Node_TruncateStmt{}):       classDDL,
	reflect.TypeOf(&pg.Node_AlterTableStmt{}):     classDDL,
	reflect.TypeOf(&pg.Node_RenameStmt{}):         classDDL,
	reflect.TypeOf(&pg.Node_IndexStmt{}):          classDDL,
	reflect.TypeOf(&pg.Node_RefreshMatViewStmt{}): classDDL,
	reflect.TypeOf(&pg.Node_ViewStmt{}):           classDDL,
	reflect.TypeOf(&pg.Node_LockStmt{}):           classLock,
	reflect.TypeOf(&pg.Node_VariableShowStmt{}):   classPass,
	reflect.TypeOf(&pg.Node_TransactionStmt{}):    classPass,
	reflect.TypeOf(&pg.Node_DiscardStmt{}):        classPass,
	reflect.TypeOf(&pg.Node_FetchStmt{}):          classPass,
	reflect.TypeOf(&pg.Node_ClosePortalStmt{}):    classPass,
	reflect.TypeOf(&pg.Node_ListenStmt{}):         classPass,
	reflect.TypeOf(&pg.Node_UnlistenStmt{}):       classPass,
	reflect.TypeOf(&pg.Node_NotifyStmt{}):         classPass,
}

func (r *stmtRewriter) statement(n *pg.Node) (StatementInfo, *Error) {
	info := StatementInfo{Kind: statementKind(n)}
	if isAuthoring(n) {
		// pgranger answers these itself when authoring is on (pgwire
		// hands Result.Authoring to its Author); they never reach the
		// backend, and without authoring they are refused.
		return info, authoringRefusal(info.Kind, r.sess.Subject.User, "")
	}
	class, known := statementClasses[reflect.TypeOf(n.Node)]
	if !known {
		return info, denyf("%s statements are not allowed through pgranger (user %q)", info.Kind, r.sess.Subject.User)
	}
	switch class {
	case classPass:
		if d := n.GetDiscardStmt(); d != nil && d.Target == pg.DiscardMode_DISCARD_ALL {
			r.newSearchPath = r.sess.DefaultSearchPath
			r.prep.clear() // DISCARD ALL deallocates prepared statements
		}
		if t := n.GetTransactionStmt(); t != nil {
			switch t.Kind {
			case pg.TransactionStmtKind_TRANS_STMT_PREPARE, pg.TransactionStmtKind_TRANS_STMT_COMMIT_PREPARED,
				pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_PREPARED:
				// Every session runs as the same service role, so a prepared
				// transaction could be finished by another user.
				return info, denyf("%s is not allowed through pgranger (user %q)", info.Kind, r.sess.Subject.User)
			}
		}
	case classSet:
		if err := r.setStatement(n.GetVariableSetStmt()); err != nil {
			return info, err
		}
	case classCopy:
		r.copyStatement(n.GetCopyStmt())
	case classDeclare:
		// The cursor's rows are computed by the rewritten query; FETCH
		// and CLOSE then pass.
		sel := n.GetDeclareCursorStmt().Query.GetSelectStmt()
		if sel == nil {
			return info, denyf("DECLARE of this kind of statement is not allowed through pgranger (user %q)", r.sess.Subject.User)
		}
		r.selectStatement(sel, nil)
		r.finishIfOK()
	case classRewrite, classDML:
		if err := r.recogniseSetConfig(n.GetSelectStmt()); err != nil {
			return info, err
		}
		r.query(n)
		r.finishIfOK()
	case classExplain:
		r.explainStatement(n.GetExplainStmt())
	case classPrepare:
		r.prepareClass(n)
	case classDDL:
		r.ddlStatement(n)
	case classLock:
		r.lockStatement(n.GetLockStmt())
	}
	info.Governed = r.governed
	for _, ref := range r.refs {
		info.Resources = append(info.Resources, ref.uses()...)
	}
	info.Resources = append(info.Resources, r.uses...)
	if r.err != nil {
		return info, r.err
	}
	return info, nil
}

func (r *stmtRewriter) finishIfOK() {
	if r.err == nil {
		r.finish()
	}
}

// query analyses a statement that may stand at the top, inside EXPLAIN,
// inside PREPARE or as the source of CREATE TABLE AS: a SELECT (SELECT
// INTO with policy.allow-ddl), a DML statement, or EXECUTE of a
// statement prepared with SQL PREPARE (inlined: prepare.go). finish is
// the caller's.
func (r *stmtRewriter) query(n *pg.Node) {
	if r.err != nil {
		return
	}
	switch v := n.Node.(type) {
	case *pg.Node_SelectStmt:
		if into := leftmostSelect(v.SelectStmt); into.IntoClause != nil {
			r.selectInto(v.SelectStmt, into)
			return
		}
		r.selectStatement(v.SelectStmt, nil)
	case *pg.Node_InsertStmt, *pg.Node_UpdateStmt, *pg.Node_DeleteStmt, *pg.Node_MergeStmt:
		r.dmlStatement(n, nil)
	case *pg.Node_ExecuteStmt:
		r.executeStatement(n)
	case *pg.Node_CreateTableAsStmt:
		r.createTableAs(v.CreateTableAsStmt)
	default:
		r.fail(denyf("%s is not allowed here through pgranger (user %q)", statementKind(n), r.sess.Subject.User))
	}
}

// leftmostSelect is the SELECT of a set operation that carries INTO.
func leftmostSelect(s *pg.SelectStmt) *pg.SelectStmt {
	for s.Op != pg.SetOperation_SETOP_NONE && s.Op != pg.SetOperation_SET_OPERATION_UNDEFINED && s.Larg != nil {
		s = s.Larg
	}
	return s
}

// statementKind names a statement the way PostgreSQL's command tags do
// ("INSERT", "CREATE TABLE"), for messages and audit.
func statementKind(n *pg.Node) StatementKind {
	switch v := n.Node.(type) {
	case *pg.Node_SelectStmt:
		if v.SelectStmt.IntoClause != nil {
			return KindSelectInto
		}
		return KindSelect
	case *pg.Node_InsertStmt:
		return KindInsert
	case *pg.Node_UpdateStmt:
		return KindUpdate
	case *pg.Node_DeleteStmt:
		return KindDelete
	case *pg.Node_MergeStmt:
		return KindMerge
	case *pg.Node_VariableSetStmt:
		if v.VariableSetStmt.Kind == pg.VariableSetKind_VAR_RESET || v.VariableSetStmt.Kind == pg.VariableSetKind_VAR_RESET_ALL {
			return KindReset
		}
		return KindSet
	case *pg.Node_VariableShowStmt:
		return KindShow
	case *pg.Node_TransactionStmt:
		switch v.TransactionStmt.Kind {
		case pg.TransactionStmtKind_TRANS_STMT_BEGIN:
			return KindBegin
		case pg.TransactionStmtKind_TRANS_STMT_START:
			return KindStartTransaction
		case pg.TransactionStmtKind_TRANS_STMT_COMMIT:
			return KindCommit
		case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK:
			return KindRollback
		case pg.TransactionStmtKind_TRANS_STMT_SAVEPOINT:
			return KindSavepoint
		case pg.TransactionStmtKind_TRANS_STMT_RELEASE:
			return KindRelease
		case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
			return KindRollback
		case pg.TransactionStmtKind_TRANS_STMT_PREPARE:
			return KindPrepareTransaction
		case pg.TransactionStmtKind_TRANS_STMT_COMMIT_PREPARED:
			return KindCommitPrepared
		case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_PREPARED:
			return KindRollbackPrepared
		}
		return KindTransaction
	case *pg.Node_CreateStmt:
		return KindCreateTable
	case *pg.Node_CreateTableAsStmt:
		if v.CreateTableAsStmt.Objtype == pg.ObjectType_OBJECT_MATVIEW {
			return KindCreateMaterializedView
		}
		return KindCreateTableAs
	case *pg.Node_ViewStmt:
		return KindCreateView
	case *pg.Node_DropStmt:
		if v.DropStmt.RemoveType == pg.ObjectType_OBJECT_POLICY {
			return KindDropPolicy
		}
		return KindDrop
	case *pg.Node_AlterTableStmt:
		return KindAlterTable
	case *pg.Node_TruncateStmt:
		return KindTruncate
	case *pg.Node_CopyStmt:
		return KindCopy
	case *pg.Node_ExplainStmt:
		return KindExplain
	case *pg.Node_PrepareStmt:
		return KindPrepare
	case *pg.Node_ExecuteStmt:
		return KindExecute
	case *pg.Node_DeclareCursorStmt:
		return KindDeclareCursor
	case *pg.Node_FetchStmt:
		if v.FetchStmt.Ismove {
			return KindMove
		}
		return KindFetch
	case *pg.Node_ClosePortalStmt:
		return KindClose
	case *pg.Node_DoStmt:
		return KindDo
	case *pg.Node_CreateFunctionStmt:
		return KindCreateFunction
	case *pg.Node_CallStmt:
		return KindCall
	case *pg.Node_DiscardStmt:
		return KindDiscard
	case *pg.Node_DeallocateStmt:
		return KindDeallocate
	case *pg.Node_ListenStmt:
		return KindListen
	case *pg.Node_UnlistenStmt:
		return KindUnlisten
	case *pg.Node_NotifyStmt:
		return KindNotify
	case *pg.Node_GrantStmt:
		if !v.GrantStmt.IsGrant {
			return KindRevoke
		}
		return KindGrant
	case *pg.Node_RenameStmt:
		if v.RenameStmt.RenameType == pg.ObjectType_OBJECT_POLICY {
			return KindAlterPolicy
		}
	case *pg.Node_CreatePolicyStmt:
		return KindCreatePolicy
	case *pg.Node_AlterPolicyStmt:
		return KindAlterPolicy
	case *pg.Node_GrantRoleStmt:
		return KindGrantRole
	case *pg.Node_CreateRoleStmt:
		return KindCreateRole
	case *pg.Node_AlterSystemStmt:
		return KindAlterSystem
	case *pg.Node_LoadStmt:
		return KindLoad
	case *pg.Node_VacuumStmt:
		if !v.VacuumStmt.IsVacuumcmd {
			return KindAnalyze
		}
		return KindVacuum
	case *pg.Node_LockStmt:
		return KindLock
	case *pg.Node_CreateSchemaStmt:
		return KindCreateSchema
	case *pg.Node_IndexStmt:
		return KindCreateIndex
	case *pg.Node_RuleStmt:
		return KindCreateRule
	case *pg.Node_CreateTrigStmt:
		return KindCreateTrigger
	case *pg.Node_RefreshMatViewStmt:
		return KindRefreshMaterializedView
	case *pg.Node_CheckPointStmt:
		return KindCheckpoint
	case *pg.Node_SecLabelStmt:
		return KindSecurityLabel
	case *pg.Node_ConstraintsSetStmt:
		return KindSetConstraints
	case *pg.Node_CreatedbStmt:
		return KindCreateDatabase
	case *pg.Node_DropdbStmt:
		return KindDropDatabase
	case *pg.Node_AlterDatabaseStmt, *pg.Node_AlterDatabaseSetStmt, *pg.Node_AlterDatabaseRefreshCollStmt:
		return KindAlterDatabase
	case *pg.Node_CreateTableSpaceStmt:
		return KindCreateTablespace
	case *pg.Node_DropTableSpaceStmt:
		return KindDropTablespace
	case *pg.Node_AlterTableSpaceOptionsStmt:
		return KindAlterTablespace
	case *pg.Node_CreatePlangStmt:
		return KindCreateLanguage
	case *pg.Node_CreateFdwStmt:
		return KindCreateForeignDataWrapper
	case *pg.Node_AlterFdwStmt:
		return KindAlterForeignDataWrapper
	case *pg.Node_CreateForeignServerStmt:
		return KindCreateServer
	case *pg.Node_AlterForeignServerStmt:
		return KindAlterServer
	case *pg.Node_CreateSeqStmt:
		return KindCreateSequence
	case *pg.Node_AlterSeqStmt:
		return KindAlterSequence
	case *pg.Node_CreateStatsStmt:
		return KindCreateStatistics
	case *pg.Node_AlterStatsStmt:
		return KindAlterStatistics
	case *pg.Node_CreateEventTrigStmt:
		return KindCreateEventTrigger
	case *pg.Node_AlterEventTrigStmt:
		return KindAlterEventTrigger
	case *pg.Node_CreateAmStmt:
		return KindCreateAccessMethod
	case *pg.Node_CreateOpClassStmt:
		return KindCreateOperatorClass
	case *pg.Node_CreateOpFamilyStmt:
		return KindCreateOperatorFamily
	case *pg.Node_AlterOpFamilyStmt:
		return KindAlterOperatorFamily
	case *pg.Node_CompositeTypeStmt, *pg.Node_CreateEnumStmt, *pg.Node_CreateRangeStmt:
		return KindCreateType
	case *pg.Node_AlterTsdictionaryStmt:
		return KindAlterTextSearchDictionary
	case *pg.Node_AlterTsconfigurationStmt:
		return KindAlterTextSearchConfiguration
	case *pg.Node_DefineStmt:
		kind := strings.TrimPrefix(v.DefineStmt.Kind.String(), "OBJECT_")
		if strings.HasPrefix(kind, "TS") {
			kind = "TEXT SEARCH " + strings.TrimPrefix(kind, "TS")
		}
		return StatementKind("CREATE " + strings.ReplaceAll(kind, "_", " "))
	}
	// Fall back to the node's type: Node_AlterRoleStmt → "ALTER ROLE".
	name := strings.TrimPrefix(reflect.TypeOf(n.Node).Elem().Name(), "Node_")
	name = strings.TrimSuffix(name, "Stmt")
	var b strings.Builder
	for i, c := range name {
		if i > 0 && c >= 'A' && c <= 'Z' {
			b.WriteByte(' ')
		}
		b.WriteRune(c)
	}
	return StatementKind(strings.ToUpper(b.String()))
}
