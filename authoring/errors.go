package authoring

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"

	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/sqlrewrite"
	"github.com/pgranger/pgranger/sqlstate"
)

func errorf(code, format string, args ...any) *sqlrewrite.Error {
	return &sqlrewrite.Error{Code: code, Message: "pgranger: " + fmt.Sprintf(format, args...)}
}

func unsupported(format string, args ...any) *sqlrewrite.Error {
	return errorf(sqlstate.FeatureNotSupported, format, args...)
}

// withDetail sets the error's Detail and Hint and returns it.
func withDetail(e *sqlrewrite.Error, detail, hint string) *sqlrewrite.Error {
	e.Detail, e.Hint = detail, hint
	return e
}

// storeError turns a failed write into the client's error: Ranger's
// refusals keep Ranger's message (what an administrator searches for in
// Ranger's logs), mapped to the SQLSTATE a PostgreSQL client expects; a
// file or transport failure says what failed. what names the statement
// and its resource ("GRANT select on table sales.orders").
func storeError(err error, user, what string) *sqlrewrite.Error {
	var we *ranger.WriteError
	if errors.As(err, &we) {
		code := sqlstate.InvalidParameterValue
		switch {
		case we.Status == http.StatusForbidden:
			code = sqlstate.InsufficientPrivilege
		case we.Status == http.StatusUnauthorized:
			return withDetail(errorf(sqlstate.SystemError, "Ranger Admin did not accept pgranger's credentials; %s for user %q was not written", what, user),
				"Ranger Admin answered HTTP 401: "+we.Message, "The pgranger log and policy.ranger.admin-user say which account; see docs/authoring.md for the rights it needs.")
		case we.Status >= 500:
			return withDetail(errorf(sqlstate.SystemError, "Ranger Admin failed; %s for user %q was not written", what, user),
				fmt.Sprintf("Ranger Admin answered HTTP %d: %s", we.Status, we.Message), "")
		case we.Code == ranger.ErrCodeNameConflict || we.Code == ranger.ErrCodeResourceConflict:
			code = sqlstate.DuplicateObject
		case we.Status == http.StatusNotFound:
			code = sqlstate.UndefinedObject
		}
		return withDetail(errorf(code, "Ranger Admin refused %s for user %q: %s", what, user, we.Message),
			fmt.Sprintf("Ranger Admin answered HTTP %d", we.Status), "")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) || errors.Is(err, ranger.ErrNoTagFile) {
		return withDetail(errorf(sqlstate.IOError, "%s for user %q was not written: %v", what, user, err), "", "")
	}
	return withDetail(errorf(sqlstate.SystemError, "%s for user %q was not written: %v", what, user, err), "", "")
}
