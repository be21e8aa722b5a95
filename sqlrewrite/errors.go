package sqlrewrite

import (
	"fmt"

	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/sqlstate"
)

// Error is a statement the rewriter refuses. Code is the SQLSTATE the client
// receives; Message names the user, the resource and the access, never data.
type Error struct {
	Code     string
	Message  string
	Detail   string
	Hint     string
	Position int32 // 1-based character offset into the statement text, 0 = none
	// Denied is set when the refusal is Ranger's answer about one
	// resource: what the text of Message and Detail says, as data for
	// the audit record (nil for every other refusal).
	Denied *Denial
	// Unanalysable: the text could not be analysed (what the rewrite
	// built does not parse again, an expression or a type does not
	// parse); Message may quote the statement, so the audit record names
	// the refusal by SQLSTATE (AuditReason).
	Unanalysable bool
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Denial is the access request a denial answers: the Ranger resource (a
// table or a column of one, or a udf), the access type and the policy
// that decided.
type Denial struct {
	Database string
	Table    string // "" for a udf
	Column   string // "" = a table-level request
	UDF      string // set instead of Table for a udf
	Access   string // Ranger's access type: "select", "update", "create", …
	PolicyID int64  // the deciding policy; 0 = none decided (no policy grants the access)
}

// denial is the Denial of a request on res decided by d.
func denial(res policy.Resource, access string, d policy.Decision) Denial {
	return Denial{Database: res.Database, Table: res.Table, Column: res.Column, Access: access, PolicyID: d.PolicyID}
}

// resourceText is the Ranger resource as the Detail of a denial names it.
func (d *Denial) resourceText() string {
	if d.UDF != "" {
		return "Ranger resource database=" + d.Database + ", udf=" + d.UDF
	}
	s := "Ranger resource database=" + d.Database + ", table=" + d.Table
	if d.Column != "" {
		s += ", column=" + d.Column
	}
	return s
}

// decisionText is why the request was denied, in policy's words.
func (d *Denial) decisionText() string {
	id := d.PolicyID
	if id < 0 { // a denial is never the super user's; no policy decided
		id = 0
	}
	return policy.Decision{PolicyID: id}.Verdict(d.Access)
}

// accessDenied is Ranger's denial of d: the client's message, a Detail
// naming the resource and what decided, and d itself.
func accessDenied(d Denial, format string, args ...any) *Error {
	return &Error{
		Code:    sqlstate.InsufficientPrivilege,
		Message: "pgranger: " + fmt.Sprintf(format, args...),
		Detail:  d.resourceText() + ": " + d.decisionText(),
		Denied:  &d,
	}
}

func denyf(format string, args ...any) *Error {
	return &Error{Code: sqlstate.InsufficientPrivilege, Message: "pgranger: " + fmt.Sprintf(format, args...)}
}

// unanalysable is errorf for a text that could not be analysed.
func unanalysable(code, format string, args ...any) *Error {
	e := errorf(code, format, args...)
	e.Unanalysable = true
	return e
}

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: "pgranger: " + fmt.Sprintf(format, args...)}
}
