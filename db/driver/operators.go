package driver

import "database/sql"

// The rows and parameters of the operators, their tokens, the audit log and authorship.
type Operator struct {
	Name      string
	Role      string
	Modules   string
	Nodes     string
	CreatedAt string
	CreatedBy string
	RevokedAt sql.NullString
}

type OperatorToken struct {
	ID        int64
	Operator  string
	TokenHash string
	CreatedAt string
	ExpiresAt sql.NullString
	RevokedAt sql.NullString
}

type AuditLog struct {
	ID       int64
	At       string
	Operator string
	Role     string
	Via      string
	Source   string
	Action   string
	Object   string
	Result   int64
	Outcome  int64
	Detail   string
}

type OperatorInsertParams struct {
	Name      string
	Role      string
	Modules   string
	Nodes     string
	CreatedAt string
	CreatedBy string
}

type OperatorRevokeParams struct {
	Now  sql.NullString
	Name string
}

type OperatorTokenInsertParams struct {
	Operator  string
	TokenHash string
	CreatedAt string
	ExpiresAt sql.NullString
}

type OperatorTokenRevokeAllParams struct {
	Now      sql.NullString
	Operator string
}

type OperatorTokenRevokeParams struct {
	Now sql.NullString
	ID  int64
}

type OperatorTokenListRow struct {
	ID        int64
	Operator  string
	CreatedAt string
	ExpiresAt sql.NullString
	RevokedAt sql.NullString
}

type OperatorTokenCheckRow struct {
	ID                int64
	TokenHash         string
	ExpiresAt         sql.NullString
	RevokedAt         sql.NullString
	Name              string
	Role              string
	Modules           string
	Nodes             string
	OperatorRevokedAt sql.NullString
}

type AuditInsertParams struct {
	At       string
	Operator string
	Role     string
	Via      string
	Source   string
	Action   string
	Object   string
	Result   int64
	Outcome  int64
	Detail   string
}

type AuditListParams struct {
	Before   int64
	Operator string
	Object   string
	Action   string
	Since    string
	Max      int64
}

type AuditPruneParams struct {
	Cutoff string
	Batch  int64
}

type ModuleRevisionSetAuthorParams struct {
	PushedBy string
	Message  string
	Module   string
	Revision int64
}

type AssignmentSetAssignedByParams struct {
	By     string
	Node   string
	Module string
}

type AssignmentSetTakenByParams struct {
	By     string
	Node   string
	Module string
}

type RolloutSetSteeredParams struct {
	By  string
	How string
	ID  int64
}
