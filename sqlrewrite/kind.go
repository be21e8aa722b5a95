package sqlrewrite

// StatementKind names a statement as its command tag does ("SELECT",
// "START TRANSACTION", "CREATE INDEX", …): the action of its audit record
// and the kind its counters are kept by. statementKind derives it from the
// syntax tree, the node types statementClasses classifies; a node type
// without a name here gets one from its type name ("ALTER ROLE").
type StatementKind string

// The kinds statementKind names.
const (
	KindSelectInto                   StatementKind = "SELECT INTO"
	KindSelect                       StatementKind = "SELECT"
	KindInsert                       StatementKind = "INSERT"
	KindUpdate                       StatementKind = "UPDATE"
	KindDelete                       StatementKind = "DELETE"
	KindMerge                        StatementKind = "MERGE"
	KindReset                        StatementKind = "RESET"
	KindSet                          StatementKind = "SET"
	KindShow                         StatementKind = "SHOW"
	KindBegin                        StatementKind = "BEGIN"
	KindStartTransaction             StatementKind = "START TRANSACTION"
	KindCommit                       StatementKind = "COMMIT"
	KindRollback                     StatementKind = "ROLLBACK"
	KindSavepoint                    StatementKind = "SAVEPOINT"
	KindRelease                      StatementKind = "RELEASE"
	KindPrepareTransaction           StatementKind = "PREPARE TRANSACTION"
	KindCommitPrepared               StatementKind = "COMMIT PREPARED"
	KindRollbackPrepared             StatementKind = "ROLLBACK PREPARED"
	KindTransaction                  StatementKind = "TRANSACTION"
	KindCreateTable                  StatementKind = "CREATE TABLE"
	KindCreateMaterializedView       StatementKind = "CREATE MATERIALIZED VIEW"
	KindCreateTableAs                StatementKind = "CREATE TABLE AS"
	KindCreateView                   StatementKind = "CREATE VIEW"
	KindDropPolicy                   StatementKind = "DROP POLICY"
	KindDrop                         StatementKind = "DROP"
	KindAlterTable                   StatementKind = "ALTER TABLE"
	KindTruncate                     StatementKind = "TRUNCATE"
	KindCopy                         StatementKind = "COPY"
	KindExplain                      StatementKind = "EXPLAIN"
	KindPrepare                      StatementKind = "PREPARE"
	KindExecute                      StatementKind = "EXECUTE"
	KindDeclareCursor                StatementKind = "DECLARE CURSOR"
	KindMove                         StatementKind = "MOVE"
	KindFetch                        StatementKind = "FETCH"
	KindClose                        StatementKind = "CLOSE"
	KindDo                           StatementKind = "DO"
	KindCreateFunction               StatementKind = "CREATE FUNCTION"
	KindCall                         StatementKind = "CALL"
	KindDiscard                      StatementKind = "DISCARD"
	KindDeallocate                   StatementKind = "DEALLOCATE"
	KindListen                       StatementKind = "LISTEN"
	KindUnlisten                     StatementKind = "UNLISTEN"
	KindNotify                       StatementKind = "NOTIFY"
	KindRevoke                       StatementKind = "REVOKE"
	KindGrant                        StatementKind = "GRANT"
	KindAlterPolicy                  StatementKind = "ALTER POLICY"
	KindCreatePolicy                 StatementKind = "CREATE POLICY"
	KindGrantRole                    StatementKind = "GRANT ROLE"
	KindCreateRole                   StatementKind = "CREATE ROLE"
	KindAlterSystem                  StatementKind = "ALTER SYSTEM"
	KindLoad                         StatementKind = "LOAD"
	KindAnalyze                      StatementKind = "ANALYZE"
	KindVacuum                       StatementKind = "VACUUM"
	KindLock                         StatementKind = "LOCK"
	KindCreateSchema                 StatementKind = "CREATE SCHEMA"
	KindCreateIndex                  StatementKind = "CREATE INDEX"
	KindCreateRule                   StatementKind = "CREATE RULE"
	KindCreateTrigger                StatementKind = "CREATE TRIGGER"
	KindRefreshMaterializedView      StatementKind = "REFRESH MATERIALIZED VIEW"
	KindCheckpoint                   StatementKind = "CHECKPOINT"
	KindSecurityLabel                StatementKind = "SECURITY LABEL"
	KindSetConstraints               StatementKind = "SET CONSTRAINTS"
	KindCreateDatabase               StatementKind = "CREATE DATABASE"
	KindDropDatabase                 StatementKind = "DROP DATABASE"
	KindAlterDatabase                StatementKind = "ALTER DATABASE"
	KindCreateTablespace             StatementKind = "CREATE TABLESPACE"
	KindDropTablespace               StatementKind = "DROP TABLESPACE"
	KindAlterTablespace              StatementKind = "ALTER TABLESPACE"
	KindCreateLanguage               StatementKind = "CREATE LANGUAGE"
	KindCreateForeignDataWrapper     StatementKind = "CREATE FOREIGN DATA WRAPPER"
	KindAlterForeignDataWrapper      StatementKind = "ALTER FOREIGN DATA WRAPPER"
	KindCreateServer                 StatementKind = "CREATE SERVER"
	KindAlterServer                  StatementKind = "ALTER SERVER"
	KindCreateSequence               StatementKind = "CREATE SEQUENCE"
	KindAlterSequence                StatementKind = "ALTER SEQUENCE"
	KindCreateStatistics             StatementKind = "CREATE STATISTICS"
	KindAlterStatistics              StatementKind = "ALTER STATISTICS"
	KindCreateEventTrigger           StatementKind = "CREATE EVENT TRIGGER"
	KindAlterEventTrigger            StatementKind = "ALTER EVENT TRIGGER"
	KindCreateAccessMethod           StatementKind = "CREATE ACCESS METHOD"
	KindCreateOperatorClass          StatementKind = "CREATE OPERATOR CLASS"
	KindCreateOperatorFamily         StatementKind = "CREATE OPERATOR FAMILY"
	KindAlterOperatorFamily          StatementKind = "ALTER OPERATOR FAMILY"
	KindCreateType                   StatementKind = "CREATE TYPE"
	KindAlterTextSearchDictionary    StatementKind = "ALTER TEXT SEARCH DICTIONARY"
	KindAlterTextSearchConfiguration StatementKind = "ALTER TEXT SEARCH CONFIGURATION"
	// no statement: refused before anything is parsed.
	KindFunctionCall StatementKind = "FUNCTION CALL"
	// KindUnknown counts the statements of a text that was refused before
	// any of them was classified (it does not parse, it is too large).
	KindUnknown StatementKind = "UNKNOWN"
)

// OpensBlock reports whether a statement of kind k opens a transaction
// block (BEGIN, START TRANSACTION).
func (k StatementKind) OpensBlock() bool { return k == KindBegin || k == KindStartTransaction }

// OpensBlock reports whether one of the text's statements opens a
// transaction block: the session's search_path is then restored to the
// block's start when it rolls back.
func (r *Result) OpensBlock() bool {
	for i := range r.Statements {
		if r.Statements[i].Kind.OpensBlock() {
			return true
		}
	}
	return false
}

// DropsTemp reports whether the text holds a DISCARD, which (ALL, TEMP)
// drops the session's temporary objects, the views of View among them.
func (r *Result) DropsTemp() bool {
	for i := range r.Statements {
		if r.Statements[i].Kind == KindDiscard {
			return true
		}
	}
	return false
}

// Governed reports whether one of the text's statements reads a relation
// Ranger governs (its errors are then sanitized).
func (r *Result) Governed() bool {
	for i := range r.Statements {
		if r.Statements[i].Governed {
			return true
		}
	}
	return false
}
