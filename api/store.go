package api

import (
	"context"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
)

// Store is what the API needs of the store: the calls its handlers make, each as *db.Store
// has it. Declared here, by its user, so the API's dependence on the store is this list.
type Store interface {
	// Nodes.
	CreateLabelledNode(ctx context.Context, name string, labels map[string]string) (token string, generation int64, err error)
	GetNode(ctx context.Context, name string) (hq.NodeView, error)
	ListNodes(ctx context.Context, f db.NodeFilter) (db.NodePage, error)
	DeleteNode(ctx context.Context, name string, ifMatch *int64) (int64, error)
	SetLabels(ctx context.Context, node string, labels map[string]string, ifMatch *int64) (int64, error)
	SetVars(ctx context.Context, node string, vars map[string]string, ifMatch *int64) (int64, error)
	CheckNodeToken(ctx context.Context, name, token string) (db.NodeCheck, error)
	AnyNodeToken(ctx context.Context, token string) (bool, error)
	// Assignments and what a node does with them.
	Assign(ctx context.Context, node, module string, taken *bool, ifMatch *int64) (int64, error)
	Unassign(ctx context.Context, node, module string, ifMatch *int64) (int64, error)
	Take(ctx context.Context, node, module string, ifMatch *int64) (int64, error)
	Retry(ctx context.Context, node, module, resource string, ifMatch *int64) (int64, error)
	// Secrets: never a value out.
	PutSecret(ctx context.Context, name string, value []byte) (db.PutSecretResult, error)
	PlanSecret(ctx context.Context, name string) (db.SecretPlan, error)
	Secrets(ctx context.Context) ([]hq.SecretView, error)
	Secret(ctx context.Context, name string) (hq.SecretView, error)
	DeleteSecret(ctx context.Context, name string) error
	SetNodeSecretsKey(ctx context.Context, node, public string) (bool, error)
	// Declarations, long-polls and reports.
	Declaration(ctx context.Context, node string) (hq.Declaration, error)
	ComposeSigned(ctx context.Context, node, instance string, sign func(*hq.Declaration)) (hq.Declaration, error)
	NodeGeneration(ctx context.Context, name string) (int64, error)
	GenerationSince(c db.NodeCheck) (int64, bool)
	OnGeneration(node string, f func()) (stop func())
	WaitGeneration(ctx context.Context, node string, after int64, wait time.Duration) (int64, error)
	Ingest(ctx context.Context, node string, rep hq.Report, opts db.IngestOptions) (hq.ReportResponse, error)
	WakeRollouts()
	// History.
	Reports(ctx context.Context, node string, limit int64) ([]hq.ReportView, error)
	Sends(ctx context.Context, node string, limit int64) ([]hq.SendView, error)
	Transitions(ctx context.Context, node string, limit int64) ([]hq.TransitionView, error)
	Drifts(ctx context.Context, node string, limit int64) ([]hq.DriftView, error)
	// Modules, placements and rollouts.
	PushModule(ctx context.Context, name string, resources []hq.Resource, message string) (db.PutModuleResult, error)
	PlanModule(ctx context.Context, name string, resources []hq.Resource) (hq.ModulePlan, error)
	GetModule(ctx context.Context, name string) (hq.ModuleView, error)
	ListModules(ctx context.Context) ([]hq.ModuleView, error)
	PutPlacement(ctx context.Context, p hq.Placement) (hq.Placement, error)
	GetPlacement(ctx context.Context, name string) (hq.Placement, error)
	ListPlacements(ctx context.Context) ([]hq.Placement, error)
	DeletePlacement(ctx context.Context, name string) error
	GetRollout(ctx context.Context, id int64) (hq.Rollout, error)
	ListRollouts(ctx context.Context, limit int) ([]hq.Rollout, error)
	PauseRollout(ctx context.Context, id int64) (hq.Rollout, error)
	ResumeRollout(ctx context.Context, id int64) (hq.Rollout, error)
	PromoteRollout(ctx context.Context, id int64) (hq.Rollout, error)
	RollbackPlacement(ctx context.Context, placement string, revision int64) (hq.Rollout, error)
	AbortRollout(ctx context.Context, id int64) (hq.Rollout, error)
	// Operators and the audit log.
	CheckOperatorToken(ctx context.Context, token string) (db.OperatorCheck, error)
	AddOperator(ctx context.Context, op hq.Operator, expires *time.Time) (hq.NewToken, error)
	NewOperatorToken(ctx context.Context, name string, expires *time.Time) (hq.NewToken, error)
	RevokeOperator(ctx context.Context, name string) error
	RevokeOperatorToken(ctx context.Context, id int64) error
	ListOperators(ctx context.Context) ([]hq.Operator, error)
	Audit(ctx context.Context, e hq.AuditEntry) error
	ListAudit(ctx context.Context, f db.AuditFilter) (db.AuditPage, error)
	// The mesh.
	MeshStatus(ctx context.Context) (hq.MeshStatus, error)
	Trouble() (db.WriteTrouble, bool)
}

var _ Store = (*db.Store)(nil)
