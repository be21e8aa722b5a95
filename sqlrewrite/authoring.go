package sqlrewrite

import (
	pg "github.com/pganalyze/pg_query_go/v6"
)

// Authoring statements (docs/authoring.md) change Ranger's policies, not
// the database: GRANT and REVOKE, CREATE / ALTER / DROP POLICY, and
// SECURITY LABEL FOR pgranger (a column's masks) or FOR pgranger_tags (a
// column's or table's tags). The rewriter never lets one reach the
// backend — PostgreSQL would run a GRANT on its own objects, and refuses a
// label provider it has not registered (22023) — it marks a text that is
// exactly one of them (Result.Authoring), for pgwire to hand to its
// Author when authoring.enabled is on, and refuses it otherwise.

// Security label providers that are pgranger's.
const (
	LabelProviderMasks = "pgranger"
	LabelProviderTags  = "pgranger_tags"
)

// isAuthoring reports whether a statement is an authoring statement.
func isAuthoring(n *pg.Node) bool {
	switch v := n.Node.(type) {
	case *pg.Node_GrantStmt, *pg.Node_CreatePolicyStmt, *pg.Node_AlterPolicyStmt:
		return true
	case *pg.Node_RenameStmt:
		return v.RenameStmt.RenameType == pg.ObjectType_OBJECT_POLICY
	case *pg.Node_DropStmt:
		return v.DropStmt.RemoveType == pg.ObjectType_OBJECT_POLICY
	case *pg.Node_SecLabelStmt:
		return v.SecLabelStmt.Provider == LabelProviderMasks || v.SecLabelStmt.Provider == LabelProviderTags
	}
	return false
}

// authoringHint names the key that turns authoring on.
const authoringHint = "pgranger writes GRANT, REVOKE, CREATE/ALTER/DROP POLICY and SECURITY LABEL FOR pgranger to Ranger when [authoring] enabled = true (docs/authoring.md)."

// authoringRefusal is the denial of an authoring statement pgranger does
// not answer: authoring is off, or the statement shares its text with
// others (it must run alone: it is answered by pgranger, the rest by the
// backend).
func authoringRefusal(kind StatementKind, user, why string) *Error {
	e := denyf("%s statements are not allowed through pgranger%s (user %q)", kind, why, user)
	e.Hint = authoringHint
	return e
}

// authoringText returns the command tag of a text that is exactly one
// authoring statement, and the refusal of a text that holds one among
// others ("" and nil otherwise).
func authoringText(tree *pg.ParseResult, user string) (string, *Error, StatementInfo) {
	for _, raw := range tree.Stmts {
		if !isAuthoring(raw.Stmt) {
			continue
		}
		kind := statementKind(raw.Stmt)
		info := StatementInfo{Kind: kind}
		if len(tree.Stmts) > 1 {
			return "", authoringRefusal(kind, user, " in a text of several statements: send it on its own"), info
		}
		return string(kind), authoringRefusal(kind, user, ""), info
	}
	return "", nil, StatementInfo{}
}
