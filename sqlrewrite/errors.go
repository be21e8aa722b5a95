package sqlrewrite

import "fmt"

// SQLSTATE codes the rewriter returns.
const (
	CodeInsufficientPrivilege = "42501"
	CodeSyntaxError           = "42601"
	CodeUndefinedTable        = "42P01"
	CodeFeatureNotSupported   = "0A000"
	CodeStatementTooComplex   = "54001"
	CodeProgramLimitExceeded  = "54000"
	CodeAmbiguousAlias        = "42712"
)

// Error is a statement the rewriter refuses. Code is the SQLSTATE the client
// receives; Message names the user, the resource and the access, never data.
type Error struct {
	Code     string
	Message  string
	Detail   string
	Hint     string
	Position int32 // 1-based character offset into the statement text, 0 = none
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func denyf(format string, args ...any) *Error {
	return &Error{Code: CodeInsufficientPrivilege, Message: "pgranger: " + fmt.Sprintf(format, args...)}
}

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: "pgranger: " + fmt.Sprintf(format, args...)}
}
