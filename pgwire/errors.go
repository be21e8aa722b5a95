package pgwire

import (
	"bufio"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgranger/pgranger/sqlrewrite"
)

func writeError(w *bufio.Writer, severity string, fe *fatalError) {
	writeMsg(w, &pgproto3.ErrorResponse{Severity: severity, SeverityUnlocalized: severity, Code: fe.code, Message: fe.msg, Hint: fe.hint})
}

// denialResponse is the ErrorResponse a client sees for a denied statement.
func denialResponse(e *sqlrewrite.Error) *pgproto3.ErrorResponse {
	return &pgproto3.ErrorResponse{
		Severity:            "ERROR",
		SeverityUnlocalized: "ERROR",
		Code:                e.Code,
		Message:             e.Message,
		Detail:              e.Detail,
		Hint:                e.Hint,
		Position:            e.Position,
	}
}

// encodeError returns the body (without type and length) of an ErrorResponse.
func encodeError(er *pgproto3.ErrorResponse) []byte {
	b, _ := er.Encode(nil)
	return b[5:]
}

func encodeParameterStatus(name, value string) []byte {
	b, _ := (&pgproto3.ParameterStatus{Name: name, Value: value}).Encode(nil)
	return b[5:]
}

// sanitizeError strips what could carry stored values out of an error
// raised while a governed statement ran (docs/security.md, "Errors"): DETAIL (e.g.
// "Failing row contains (…)", key values), WHERE context, and for data
// exceptions (class 22, such as a failed cast that quotes its input) the
// message itself.
func sanitizeError(body []byte) []byte {
	var er pgproto3.ErrorResponse
	if er.Decode(body) != nil {
		return encodeError(&pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: "XX000", Message: "pgranger: malformed error from the backend"})
	}
	clean := pgproto3.ErrorResponse{
		Severity:            er.Severity,
		SeverityUnlocalized: er.SeverityUnlocalized,
		Code:                er.Code,
		Message:             er.Message,
		Hint:                er.Hint,
	}
	if strings.HasPrefix(er.Code, "22") {
		clean.Message = "pgranger: a data exception occurred while evaluating a governed statement (SQLSTATE " + er.Code + ")"
		clean.Hint = ""
	}
	return encodeError(&clean)
}
