// Package sqlstate names the SQLSTATE codes pgranger answers with, once,
// with PostgreSQL's own names for them (src/backend/utils/errcodes.txt).
package sqlstate

// Class 00, 01: success and warnings (authoring's notices).
const (
	SuccessfulCompletion = "00000"
	Warning              = "01000"
)

// Class 08: connection exceptions.
const (
	ConnectionFailure = "08006"
	ProtocolViolation = "08P01"
)

// Class 0A, 22, 25, 26, 28, 3F: the statement or the session's state.
const (
	FeatureNotSupported             = "0A000"
	InvalidParameterValue           = "22023"
	ActiveSQLTransaction            = "25001"
	InFailedSQLTransaction          = "25P02"
	IdleInTransactionSessionTimeout = "25P03"
	InvalidSQLStatementName         = "26000"
	InvalidAuthorization            = "28000"
	InvalidPassword                 = "28P01"
	InvalidSchemaName               = "3F000"
)

// Class 40, 42: transaction rollback, syntax error or access rule violation.
const (
	SerializationFailure       = "40001"
	InsufficientPrivilege      = "42501"
	SyntaxError                = "42601"
	UndefinedColumn            = "42703"
	UndefinedObject            = "42704"
	DuplicateObject            = "42710"
	DuplicateAlias             = "42712"
	UndefinedTable             = "42P01"
	UndefinedParameter         = "42P02"
	DuplicatePreparedStatement = "42P05"
	AmbiguousAlias             = "42P09"
)

// Class 53, 54, 57, 58: resources, limits, operator intervention, system.
const (
	TooManyConnections   = "53300"
	ProgramLimitExceeded = "54000"
	StatementTooComplex  = "54001"
	AdminShutdown        = "57P01"
	CannotConnectNow     = "57P03"
	IdleSessionTimeout   = "57P05"
	SystemError          = "58000"
	IOError              = "58030"
)
