package driver

import (
	"context"
	"database/sql"
)

// Queries is every statement the store runs, in hq's types. Each engine implements it over
// its own SQL; lists of names are Go slices, which each engine passes as it likes.
type Queries interface {
	SecretQueries
	AssignmentCountByModule(ctx context.Context) ([]AssignmentCountByModuleRow, error)
	AssignmentCountBySource(ctx context.Context, arg AssignmentCountBySourceParams) (int64, error)
	AssignmentDeclaration(ctx context.Context, node string) ([]AssignmentDeclarationRow, error)
	AssignmentDelete(ctx context.Context, arg AssignmentDeleteParams) (int64, error)
	AssignmentDeleteByNode(ctx context.Context, node string) error
	AssignmentDeleteOnNodes(ctx context.Context, arg AssignmentDeleteOnNodesParams) error
	AssignmentGet(ctx context.Context, arg AssignmentGetParams) (Assignment, error)
	AssignmentInsert(ctx context.Context, arg AssignmentInsertParams) error
	AssignmentInsertOnNodes(ctx context.Context, arg AssignmentInsertOnNodesParams) error
	AssignmentListBehind(ctx context.Context, arg AssignmentListBehindParams) ([]AssignmentListBehindRow, error)
	AssignmentListByModule(ctx context.Context, module string) ([]AssignmentListByModuleRow, error)
	AssignmentListByNode(ctx context.Context, node string) ([]AssignmentListByNodeRow, error)
	AssignmentListByNodes(ctx context.Context, nodes []string) ([]AssignmentListByNodesRow, error)
	AssignmentListBySource(ctx context.Context, arg AssignmentListBySourceParams) ([]AssignmentListBySourceRow, error)
	AssignmentListOfModuleOnNodes(ctx context.Context, arg AssignmentListOfModuleOnNodesParams) ([]AssignmentListOfModuleOnNodesRow, error)
	AssignmentListOrphaned(ctx context.Context, max int64) ([]AssignmentListOrphanedRow, error)
	AssignmentListTakenDiffers(ctx context.Context, arg AssignmentListTakenDiffersParams) ([]string, error)
	AssignmentOthersOfModule(ctx context.Context, module string) ([]AssignmentOthersOfModuleRow, error)
	AssignmentPinNodes(ctx context.Context, arg AssignmentPinNodesParams) error
	AssignmentRevisionsOfPlacement(ctx context.Context, arg AssignmentRevisionsOfPlacementParams) ([]int64, error)
	AssignmentSetTaken(ctx context.Context, arg AssignmentSetTakenParams) error
	AssignmentSetTakenOnNodes(ctx context.Context, arg AssignmentSetTakenOnNodesParams) error
	ContainerStatusListByNode(ctx context.Context, node string) ([]ContainerStatus, error)
	ContainerStatusRecord(ctx context.Context, arg ContainerStatusRecordParams) error
	DriftCountsByNodesSince(ctx context.Context, arg DriftCountsByNodesSinceParams) ([]DriftCountsByNodesSinceRow, error)
	DriftInsert(ctx context.Context, arg DriftInsertParams) error
	DriftListByNode(ctx context.Context, arg DriftListByNodeParams) ([]Drift, error)
	DriftPrune(ctx context.Context, arg DriftPruneParams) (int64, error)
	DriftPruneWindowEnd(ctx context.Context, arg DriftPruneWindowEndParams) (DriftPruneWindowEndRow, error)
	DriftTopSince(ctx context.Context, arg DriftTopSinceParams) ([]DriftTopSinceRow, error)
	LeaseList(ctx context.Context) ([]WorkerLease, error)
	LeaseRelease(ctx context.Context, arg LeaseReleaseParams) error
	LeaseTake(ctx context.Context, arg LeaseTakeParams) (int64, error)
	ModuleGet(ctx context.Context, name string) (Module, error)
	ModuleList(ctx context.Context) ([]Module, error)
	ModuleListBehind(ctx context.Context) ([]ModuleListBehindRow, error)
	ModuleOverviewGet(ctx context.Context, name string) (ModuleOverviewGetRow, error)
	ModuleOverviewList(ctx context.Context, arg ModuleOverviewListParams) ([]ModuleOverviewListRow, error)
	ModuleRevisionGet(ctx context.Context, arg ModuleRevisionGetParams) (ModuleRevision, error)
	ModuleRevisionInsert(ctx context.Context, arg ModuleRevisionInsertParams) error
	ModuleRevisionListPage(ctx context.Context, arg ModuleRevisionListPageParams) ([]ModuleRevisionListPageRow, error)
	ModuleRevisionResourcesInsert(ctx context.Context, arg ModuleRevisionResourcesInsertParams) error
	ModuleRevisionsWithoutResources(ctx context.Context) ([]ModuleRevisionsWithoutResourcesRow, error)
	ModuleUpsert(ctx context.Context, arg ModuleUpsertParams) (int64, error)
	NodeBumpGeneration(ctx context.Context, name string) (int64, error)
	NodeBumpGenerations(ctx context.Context, nodes []string) ([]NodeBumpGenerationsRow, error)
	NodeExistsByTokenHash(ctx context.Context, tokenHash string) (bool, error)
	NodeGeneration(ctx context.Context, name string) (int64, error)
	NodeGenerationList(ctx context.Context) ([]NodeGenerationListRow, error)
	NodeGenerationTotal(ctx context.Context) (NodeGenerationTotalRow, error)
	NodeGet(ctx context.Context, name string) (Node, error)
	NodeGetAny(ctx context.Context, name string) (Node, error)
	NodeInsert(ctx context.Context, arg NodeInsertParams) error
	NodeLabelList(ctx context.Context) ([]NodeLabelListRow, error)
	NodeListByNames(ctx context.Context, nodes []string) ([]Node, error)
	NodeMarkDeleted(ctx context.Context, arg NodeMarkDeletedParams) error
	NodeNamesBySeverity(ctx context.Context, arg NodeNamesBySeverityParams) ([]NodeNamesBySeverityRow, error)
	NodeNamesByStatus(ctx context.Context, arg NodeNamesByStatusParams) ([]string, error)
	NodeRaiseGeneration(ctx context.Context, arg NodeRaiseGenerationParams) (int64, error)
	NodeRegisterAgain(ctx context.Context, arg NodeRegisterAgainParams) error
	NodeRegistrationEnd(ctx context.Context, arg NodeRegistrationEndParams) error
	NodeRegistrationInsert(ctx context.Context, arg NodeRegistrationInsertParams) error
	NodeSetApplied(ctx context.Context, arg NodeSetAppliedParams) error
	NodeSetHost(ctx context.Context, arg NodeSetHostParams) error
	NodeSetLabels(ctx context.Context, arg NodeSetLabelsParams) error
	NodeSetReported(ctx context.Context, arg NodeSetReportedParams) error
	NodeSetVars(ctx context.Context, arg NodeSetVarsParams) error
	NodeStatusCounts(ctx context.Context, silentBefore string) ([]NodeStatusCountsRow, error)
	NodeStatusList(ctx context.Context) ([]NodeStatusListRow, error)
	NodeTokenCheck(ctx context.Context, name string) (NodeTokenCheckRow, error)
	PlacementDelete(ctx context.Context, name string) (int64, error)
	PlacementGet(ctx context.Context, name string) (Placement, error)
	PlacementList(ctx context.Context) ([]Placement, error)
	PlacementListByModule(ctx context.Context, module string) ([]Placement, error)
	PlacementListPage(ctx context.Context, arg PlacementListPageParams) ([]Placement, error)
	PlacementUpsert(ctx context.Context, arg PlacementUpsertParams) error
	ReportGet(ctx context.Context, id int64) (Report, error)
	ReportInsert(ctx context.Context, arg ReportInsertParams) (int64, error)
	ReportListByNode(ctx context.Context, arg ReportListByNodeParams) ([]Report, error)
	ReportListLatestByNodes(ctx context.Context, nodes []string) ([]Report, error)
	ReportPrune(ctx context.Context, arg ReportPruneParams) (int64, error)
	ReportPruneWindowEnd(ctx context.Context, arg ReportPruneWindowEndParams) (ReportPruneWindowEndRow, error)
	ReportRepeat(ctx context.Context, arg ReportRepeatParams) error
	ReportStandingRows(ctx context.Context, since string) ([]ReportStandingRowsRow, error)
	ResourceStateApplyAllPending(ctx context.Context, arg ResourceStateApplyAllPendingParams) (int64, error)
	ResourceStateApplyPending(ctx context.Context, arg ResourceStateApplyPendingParams) (int64, error)
	ResourceStateApplyPendingByKey(ctx context.Context, arg ResourceStateApplyPendingParams) (int64, error)
	ResourceStateBlockedCounts(ctx context.Context) ([]ResourceStateBlockedCountsRow, error)
	ResourceStateBlockedCountsByNodes(ctx context.Context, nodes []string) ([]ResourceStateBlockedCountsByNodesRow, error)
	ResourceStateClearRetry(ctx context.Context, node string) error
	ResourceStateCountAttempts(ctx context.Context, arg ResourceStateCountAttemptsParams) error
	ResourceStateCountAttemptsByKey(ctx context.Context, arg ResourceStateCountAttemptsParams) error
	ResourceStateCountByNode(ctx context.Context, node string) (int64, error)
	ResourceStateDeclare(ctx context.Context, arg ResourceStateDeclareParams) error
	ResourceStateGet(ctx context.Context, arg ResourceStateGetParams) (ResourceState, error)
	ResourceStateHeldFoundByNode(ctx context.Context, node string) ([]ResourceStateHeldFoundByNodeRow, error)
	ResourceStateListByNode(ctx context.Context, node string) ([]ResourceState, error)
	ResourceStateListHeld(ctx context.Context) ([]ResourceStateListHeldRow, error)
	ResourceStateListNotFineByNode(ctx context.Context, node string) ([]ResourceState, error)
	ResourceStateListNotFineByNodes(ctx context.Context, nodes []string) ([]ResourceState, error)
	ResourceStateListStuck(ctx context.Context) ([]ResourceStateListStuckRow, error)
	ResourceStateListStuckByNode(ctx context.Context, node string) ([]ResourceStateListStuckByNodeRow, error)
	ResourceStateMoveOnNodes(ctx context.Context, arg ResourceStateMoveOnNodesParams) error
	ResourceStateRecord(ctx context.Context, arg ResourceStateRecordParams) error
	ResourceStateRedeclareOnNodes(ctx context.Context, arg ResourceStateRedeclareOnNodesParams) error
	ResourceStateRemoveOnNodes(ctx context.Context, arg ResourceStateRemoveOnNodesParams) error
	ResourceStateRequestRetry(ctx context.Context, arg ResourceStateRequestRetryParams) (int64, error)
	ResourceStateRetryList(ctx context.Context, node string) ([]ResourceStateRetryListRow, error)
	RolloutAbort(ctx context.Context, arg RolloutAbortParams) (int64, error)
	RolloutComplete(ctx context.Context, arg RolloutCompleteParams) (int64, error)
	RolloutCountByState(ctx context.Context) ([]RolloutCountByStateRow, error)
	RolloutGet(ctx context.Context, id int64) (Rollout, error)
	RolloutInsert(ctx context.Context, arg RolloutInsertParams) (int64, error)
	RolloutLatestOfPlacement(ctx context.Context, arg RolloutLatestOfPlacementParams) ([]Rollout, error)
	RolloutLatestOfPlacements(ctx context.Context, placements []string) ([]Rollout, error)
	RolloutList(ctx context.Context, max int64) ([]Rollout, error)
	RolloutListActive(ctx context.Context) ([]Rollout, error)
	RolloutListActiveOfPlacement(ctx context.Context, arg RolloutListActiveOfPlacementParams) ([]int64, error)
	RolloutListPage(ctx context.Context, arg RolloutListPageParams) ([]Rollout, error)
	RolloutNodeAdvance(ctx context.Context, arg RolloutNodeAdvanceParams) error
	RolloutNodeCounts(ctx context.Context, rollout int64) (RolloutNodeCountsRow, error)
	RolloutNodeDeleteGone(ctx context.Context, arg RolloutNodeDeleteGoneParams) (int64, error)
	RolloutNodeInsertFromPlacement(ctx context.Context, arg RolloutNodeInsertFromPlacementParams) (int64, error)
	RolloutNodeInsertOnNodes(ctx context.Context, arg RolloutNodeInsertOnNodesParams) error
	RolloutNodeList(ctx context.Context, rollout int64) ([]RolloutNode, error)
	RolloutNodeListAdvanced(ctx context.Context, arg RolloutNodeListParams) ([]RolloutNodePin, error)
	RolloutNodeListFailed(ctx context.Context, arg RolloutNodeListParams) ([]RolloutNodePin, error)
	RolloutNodeListFailedReasons(ctx context.Context, rollout int64) ([]RolloutNodeListFailedReasonsRow, error)
	RolloutNodeListPending(ctx context.Context, arg RolloutNodeListParams) ([]RolloutNodePin, error)
	RolloutNodeMarkDone(ctx context.Context, arg RolloutNodeMarkDoneParams) (int64, error)
	RolloutNodeMarkFailed(ctx context.Context, arg RolloutNodeMarkFailedParams) (int64, error)
	RolloutNodePage(ctx context.Context, arg RolloutNodePageParams) ([]RolloutNode, error)
	RolloutNodeRevert(ctx context.Context, arg RolloutNodeRevertParams) error
	RolloutOfNode(ctx context.Context, node string) ([]RolloutOfNodeRow, error)
	RolloutPause(ctx context.Context, arg RolloutPauseParams) (int64, error)
	RolloutPromote(ctx context.Context, arg RolloutPromoteParams) (int64, error)
	RolloutResume(ctx context.Context, arg RolloutResumeParams) (int64, error)
	RolloutSetCounts(ctx context.Context, arg RolloutSetCountsParams) error
	RolloutSetPausedReason(ctx context.Context, arg RolloutPauseParams) error
	RolloutTransitionList(ctx context.Context, arg RolloutTransitionListParams) ([]RolloutTransitionListRow, error)
	RolloutWaveList(ctx context.Context, rollout int64) ([]RolloutWaveListRow, error)
	SendCountByOutcome(ctx context.Context) ([]SendCountByOutcomeRow, error)
	SendGet(ctx context.Context, arg SendGetParams) (Send, error)
	SendInsert(ctx context.Context, arg SendInsertParams) (int64, error)
	SendInsertRefused(ctx context.Context, arg SendInsertRefusedParams) (int64, error)
	SendListByNode(ctx context.Context, arg SendListByNodeParams) ([]Send, error)
	SendListRefused(ctx context.Context) ([]Send, error)
	SendListRefusedByNodes(ctx context.Context, nodes []string) ([]Send, error)
	SendMarkApplied(ctx context.Context, arg SendMarkAppliedParams) error
	SendMarkRefused(ctx context.Context, arg SendMarkRefusedParams) (int64, error)
	SendMarkSuperseded(ctx context.Context, arg SendMarkSupersededParams) error
	SendPrune(ctx context.Context, arg SendPruneParams) (int64, error)
	SendPruneWindowEnd(ctx context.Context, arg SendPruneWindowEndParams) (SendPruneWindowEndRow, error)
	SendRefusedExists(ctx context.Context, arg SendRefusedExistsParams) (bool, error)
	TransitionListByNode(ctx context.Context, arg TransitionListByNodeParams) ([]Transition, error)
	TransitionPrune(ctx context.Context, arg TransitionPruneParams) (int64, error)
	TransitionPruneWindowEnd(ctx context.Context, arg TransitionPruneWindowEndParams) (TransitionPruneWindowEndRow, error)
	WebSessionDelete(ctx context.Context, idHash string) error
	WebSessionDeleteExpired(ctx context.Context, now string) (int64, error)
	WebSessionInsert(ctx context.Context, arg WebSessionInsertParams) error
	WebSessionGet(ctx context.Context, arg WebSessionGetParams) (WebSessionGetRow, error)
	// Operators, their tokens and the audit log (operators.go).
	OperatorInsert(ctx context.Context, arg OperatorInsertParams) error
	OperatorGet(ctx context.Context, name string) (Operator, error)
	OperatorList(ctx context.Context) ([]Operator, error)
	OperatorRevoke(ctx context.Context, arg OperatorRevokeParams) (int64, error)
	OperatorAdminCount(ctx context.Context) (int64, error)
	OperatorTokenInsert(ctx context.Context, arg OperatorTokenInsertParams) (int64, error)
	OperatorTokenRevokeAll(ctx context.Context, arg OperatorTokenRevokeAllParams) error
	OperatorTokenRevoke(ctx context.Context, arg OperatorTokenRevokeParams) (int64, error)
	OperatorTokenList(ctx context.Context) ([]OperatorTokenListRow, error)
	OperatorTokenCheck(ctx context.Context, tokenHash string) (OperatorTokenCheckRow, error)
	AuditInsert(ctx context.Context, arg AuditInsertParams) error
	AuditList(ctx context.Context, arg AuditListParams) ([]AuditLog, error)
	AuditPruneOpen(ctx context.Context) error
	AuditPruneClose(ctx context.Context) error
	AuditPrune(ctx context.Context, arg AuditPruneParams) (int64, error)
	ModuleRevisionSetAuthor(ctx context.Context, arg ModuleRevisionSetAuthorParams) error
	AssignmentSetAssignedBy(ctx context.Context, arg AssignmentSetAssignedByParams) error
	AssignmentSetTakenBy(ctx context.Context, arg AssignmentSetTakenByParams) error
	RolloutSetSteered(ctx context.Context, arg RolloutSetSteeredParams) error
}

type Assignment struct {
	Node       string
	Module     string
	Taken      bool
	AssignedAt string
	Revision   int64
	Source     string
	AssignedBy string
	TakenBy    string
}

type AssignmentCountByModuleRow struct {
	Module string
	Nodes  int64
}

type AssignmentCountBySourceParams struct {
	Source string
	Module string
}

type AssignmentDeclarationRow struct {
	Module   string
	Taken    bool
	Revision int64
}

type AssignmentDeleteOnNodesParams struct {
	Module string
	Source string
	Nodes  []string
}

type AssignmentDeleteParams struct {
	Node   string
	Module string
}

type AssignmentGetParams struct {
	Node   string
	Module string
}

type AssignmentInsertOnNodesParams struct {
	Module     string
	Taken      bool
	AssignedAt string
	Revision   int64
	Source     string
	Nodes      []string
}

type AssignmentInsertParams struct {
	Node       string
	Module     string
	Taken      bool
	AssignedAt string
	Revision   int64
	Source     string
}

type AssignmentListBehindParams struct {
	Module   string
	Revision int64
	Max      int64
}

type AssignmentListBehindRow struct {
	Node     string
	Revision int64
}

type AssignmentListByModuleRow struct {
	Node  string
	Taken bool
}

type AssignmentListByNodeRow struct {
	Module     string
	Taken      bool
	AssignedAt string
	Revision   int64
	Source     string
}

type AssignmentListByNodesRow struct {
	Node       string
	Module     string
	Taken      bool
	Revision   int64
	Source     string
	AssignedAt string
	AssignedBy string
	TakenBy    string
}

type AssignmentListBySourceParams struct {
	Source string
	Module string
}

type AssignmentListBySourceRow struct {
	Node     string
	Revision int64
}

type AssignmentListOfModuleOnNodesParams struct {
	Module string
	Nodes  []string
}

type AssignmentListOfModuleOnNodesRow struct {
	Node   string
	Source string
}

type AssignmentListOrphanedRow struct {
	Node   string
	Module string
	Source string
}

type AssignmentListTakenDiffersParams struct {
	Source string
	Module string
	Taken  bool
	Max    int64
}

type AssignmentOthersOfModuleRow struct {
	Node     string
	Module   string
	Revision int64
}

type AssignmentPinNodesParams struct {
	Revision int64
	Module   string
	Nodes    []string
}

type AssignmentSetTakenOnNodesParams struct {
	Taken  bool
	Module string
	Source string
	Nodes  []string
}

type AssignmentSetTakenParams struct {
	Taken  bool
	Node   string
	Module string
}

type ContainerStatus struct {
	Node        string
	Module      string
	Resource    string
	ContainerID string
	ImageDigest string
	StartedAt   sql.NullString
	Restarts    int64
	Health      string
	SpecDigest  string
	EarlierSpec int64
	Since       string
	ReportID    sql.NullInt64
}

type ContainerStatusRecordParams struct {
	ContainerID string
	ImageDigest string
	StartedAt   sql.NullString
	Restarts    int64
	Health      string
	SpecDigest  string
	EarlierSpec int64
	Since       string
	ReportID    sql.NullInt64
	Node        string
	Module      string
	Resource    string
}

type Drift struct {
	ID       int64
	Node     string
	Module   string
	Resource string
	At       string
	ReportID sql.NullInt64
	Detail   string
	Found    sql.NullString
}

type DriftCountsByNodesSinceParams struct {
	Nodes     []string
	Since     string
	Threshold int64
}

type DriftCountsByNodesSinceRow struct {
	Node     string
	Module   string
	Resource string
	Drifts   int64
}

type DriftInsertParams struct {
	Node     string
	Module   string
	Resource string
	At       string
	ReportID sql.NullInt64
	Detail   string
	Found    sql.NullString
}

type DriftListByNodeParams struct {
	Node string
	Max  int64
}

type DriftPruneParams struct {
	Keep   int64
	After  int64
	Until  int64
	Cutoff string
}

type DriftPruneWindowEndParams struct {
	After int64
	Batch int64
}

type DriftPruneWindowEndRow struct {
	ID int64
	At string
}

type DriftTopSinceParams struct {
	Since string
	Max   int64
}

type DriftTopSinceRow struct {
	Module   string
	Resource string
	Nodes    int64
	Drifts   int64
}

type LeaseReleaseParams struct {
	Worker string
	Holder string
}

type LeaseTakeParams struct {
	Worker    string
	Holder    string
	Now       string
	ExpiresAt string
}

type Module struct {
	Name      string
	Revision  int64
	CreatedAt string
	UpdatedAt string
}

type ModuleListBehindRow struct {
	Name     string
	Revision int64
}

type ModuleOverviewGetRow struct {
	Name       string
	Revision   int64
	CreatedAt  string
	UpdatedAt  string
	Nodes      int64
	Placements int64
}

type ModuleOverviewListParams struct {
	After string
	Max   int64
}

type ModuleOverviewListRow struct {
	Name       string
	Revision   int64
	CreatedAt  string
	UpdatedAt  string
	Nodes      int64
	Placements int64
}

type ModuleRevision struct {
	Module        string
	Revision      int64
	Resources     string
	ResourceCount int64
	Digest        string
	CreatedAt     string
	PushedBy      string
	Message       string
}

type ModuleRevisionGetParams struct {
	Module   string
	Revision int64
}

type ModuleRevisionInsertParams struct {
	Module        string
	Revision      int64
	Resources     string
	ResourceCount int64
	Digest        string
	CreatedAt     string
}

type ModuleRevisionListPageParams struct {
	Module string
	Before int64
	Max    int64
}

type ModuleRevisionListPageRow struct {
	Revision      int64
	ResourceCount int64
	Digest        string
	CreatedAt     string
	PushedBy      string
	Message       string
}

type ModuleRevisionResourcesInsertParams struct {
	Module   string
	Revision int64
	Rows     string
}

type ModuleRevisionsWithoutResourcesRow struct {
	Module    string
	Revision  int64
	Resources string
}

type ModuleUpsertParams struct {
	Name string
	Now  string
}

type Node struct {
	Name                    string
	TokenHash               string
	Generation              int64
	AppliedGeneration       int64
	AppliedDigest           string
	AppliedAt               sql.NullString
	CreatedAt               string
	LastReportAt            sql.NullString
	LastReportID            sql.NullInt64
	DeletedAt               sql.NullString
	ResourcesApplied        int64
	ResourcesPending        int64
	ResourcesFailed         int64
	ResourcesStuck          int64
	ResourcesHeld           int64
	ResourcesGroupedPending int64
	Labels                  string
	Vars                    string
	HostdVersion            string
	Os                      string
	Arch                    string
	BootedAt                sql.NullString
}

type NodeBumpGenerationsRow struct {
	Name       string
	Generation int64
}

type NodeTokenCheckRow struct {
	TokenHash  string
	Generation int64
}

type NodeGenerationListRow struct {
	Name       string
	Generation int64
}

type NodeGenerationTotalRow struct {
	Nodes       int64
	Generations int64
}

type NodeInsertParams struct {
	Name      string
	TokenHash string
	CreatedAt string
}

type NodeLabelListRow struct {
	Name   string
	Labels string
}

type NodeMarkDeletedParams struct {
	DeletedAt     sql.NullString
	VoidTokenHash string
	Name          string
}

type NodeNamesBySeverityParams struct {
	SilentBefore  string
	Status        string
	NotConverged  bool
	AfterSeverity int64
	After         string
	Max           int64
}

type NodeNamesBySeverityRow struct {
	Name     string
	Status   string
	Severity int64
}

type NodeNamesByStatusParams struct {
	SilentBefore string
	After        string
	Status       string
	NotConverged bool
	Max          int64
}

type NodeRaiseGenerationParams struct {
	Generation int64
	Name       string
}

type NodeRegisterAgainParams struct {
	TokenHash string
	CreatedAt string
	Name      string
}

type NodeRegistrationEndParams struct {
	DeletedAt      sql.NullString
	LastGeneration sql.NullInt64
	Node           string
}

type NodeRegistrationInsertParams struct {
	Node            string
	RegisteredAt    string
	FirstGeneration int64
}

type NodeSetAppliedParams struct {
	AppliedGeneration int64
	AppliedDigest     string
	AppliedAt         sql.NullString
	Name              string
}

type NodeSetHostParams struct {
	HostdVersion string
	Os           string
	Arch         string
	BootedAt     sql.NullString
	Name         string
}

type NodeSetLabelsParams struct {
	Labels string
	Name   string
}

type NodeSetReportedParams struct {
	LastReportAt sql.NullString
	LastReportID sql.NullInt64
	Name         string
}

type NodeSetVarsParams struct {
	Vars string
	Name string
}

type NodeStatusCountsRow struct {
	Status         string
	Nodes          int64
	Applied        int64
	Pending        int64
	Failed         int64
	Stuck          int64
	Held           int64
	GroupedPending int64
}

type NodeStatusListRow struct {
	Name                    string
	Generation              int64
	AppliedGeneration       int64
	LastReportAt            sql.NullString
	ResourcesApplied        int64
	ResourcesPending        int64
	ResourcesFailed         int64
	ResourcesStuck          int64
	ResourcesHeld           int64
	ResourcesGroupedPending int64
	Labels                  string
}

type Placement struct {
	Name      string
	Module    string
	Selector  string
	Taken     bool
	Rollout   string
	CreatedAt string
	UpdatedAt string
}

type PlacementListPageParams struct {
	After string
	Max   int64
}

type PlacementUpsertParams struct {
	Name     string
	Module   string
	Selector string
	Taken    bool
	Rollout  string
	Now      string
}

type Report struct {
	ID             int64
	Node           string
	Generation     int64
	Digest         string
	Summary        string
	OutcomeDigest  string
	Applied        int64
	Failed         int64
	Stuck          int64
	Held           int64
	GroupedPending int64
	Pending        int64
	StartedAt      sql.NullString
	FinishedAt     sql.NullString
	At             string
	LastAt         string
	Repeats        int64
}

type ReportInsertParams struct {
	Node           string
	Generation     int64
	Digest         string
	Summary        string
	OutcomeDigest  string
	Applied        int64
	Failed         int64
	Stuck          int64
	Held           int64
	GroupedPending int64
	Pending        int64
	StartedAt      sql.NullString
	FinishedAt     sql.NullString
	At             string
}

type ReportListByNodeParams struct {
	Node string
	Max  int64
}

type ReportPruneParams struct {
	Keep   int64
	After  int64
	Until  int64
	Cutoff string
}

type ReportPruneWindowEndParams struct {
	After int64
	Batch int64
}

type ReportPruneWindowEndRow struct {
	ID int64
	At string
}

type ReportRepeatParams struct {
	LastAt string
	ID     int64
}

type ReportStandingRowsRow struct {
	Node      string
	At        string
	LastAt    string
	Fine      int64
	DeletedAt string
}

type ResourceState struct {
	Node                string
	Module              string
	Resource            string
	Kind                string
	SpecDigest          string
	Position            int64
	GroupName           string
	State               string
	Since               string
	Attempts            int64
	ConsecutiveFailures int64
	FailingSince        sql.NullString
	NeverApplied        bool
	LastError           string
	HoldReason          string
	BlockedBy           string
	RetryRequested      bool
	ReportID            sql.NullInt64
	Reason              string
	// HeldFound and HeldFoundOmitted are what hostd found in a held file (hq.FoundFile); NULL
	// and "" when it did not say, and in the rows of the listings that leave them out.
	HeldFound        sql.NullString
	HeldFoundOmitted string
}

type ResourceStateApplyAllPendingParams struct {
	Since    string
	Attempt  int64
	ReportID sql.NullInt64
	Node     string
}

type ResourceStateApplyPendingParams struct {
	Since    string
	Attempt  int64
	ReportID sql.NullInt64
	Node     string
	Refs     []string
}

type ResourceStateBlockedCountsByNodesRow struct {
	Node      string
	BlockedBy string
	Blocks    int64
}

type ResourceStateBlockedCountsRow struct {
	Node      string
	BlockedBy string
	Blocks    int64
}

type ResourceStateCountAttemptsParams struct {
	ReportID sql.NullInt64
	Node     string
	Refs     []string
}

type ResourceStateDeclareParams struct {
	Since    string
	Reason   string
	Nodes    []string
	Module   string
	Revision int64
	Every    bool
	Names    []string
}

type ResourceStateGetParams struct {
	Node     string
	Module   string
	Resource string
}

type ResourceStateHeldFoundByNodeRow struct {
	Module           string
	Resource         string
	HeldFound        sql.NullString
	HeldFoundOmitted string
}

type ResourceStateListHeldRow struct {
	Node     string
	Module   string
	Resource string
}

type ResourceStateListStuckByNodeRow struct {
	Module   string
	Resource string
}

type ResourceStateListStuckRow struct {
	Node         string
	Module       string
	Resource     string
	NeverApplied bool
}

type ResourceStateMoveOnNodesParams struct {
	Position  int64
	GroupName string
	Module    string
	Resource  string
	Nodes     []string
}

type ResourceStateRecordParams struct {
	State               string
	Since               string
	Attempts            int64
	ConsecutiveFailures int64
	FailingSince        sql.NullString
	NeverApplied        bool
	LastError           string
	HoldReason          string
	BlockedBy           string
	RetryRequested      bool
	ReportID            sql.NullInt64
	Reason              string
	HeldFound           sql.NullString
	HeldFoundOmitted    string
	Node                string
	Module              string
	Resource            string
}

type ResourceStateRedeclareOnNodesParams struct {
	Kind       string
	SpecDigest string
	Position   int64
	GroupName  string
	Since      string
	Reason     string
	Module     string
	Resource   string
	Nodes      []string
}

type ResourceStateRemoveOnNodesParams struct {
	Module string
	Nodes  []string
	Names  []string
}

type ResourceStateRequestRetryParams struct {
	Since    string
	Node     string
	Module   string
	Resource string
}

type ResourceStateRetryListRow struct {
	Module   string
	Resource string
}

type Rollout struct {
	ID           int64
	Module       string
	Placement    string
	FromRevision int64
	ToRevision   int64
	State        string
	Policy       string
	Nodes        int64
	Done         int64
	InFlight     int64
	Failed       int64
	Forgiven     int64
	Reason       string
	CreatedAt    string
	UpdatedAt    string
	EndedAt      sql.NullString
	// FromRevisions is every revision the nodes moved from, a JSON array ('' from before it
	// was kept); Promoted is 1 once an operator promoted it; RollbackOf is the module's newest
	// revision when a rollback started, 0 for a rollout of a new revision.
	FromRevisions string
	Promoted      int64
	RollbackOf    int64
	// SteeredBy is the operator who last steered the rollout (or started it by a rollback),
	// Steered how ("paused", "resumed", "promoted", "aborted", "rollback"); '' for none.
	SteeredBy string
	Steered   string
}

type RolloutAbortParams struct {
	Reason string
	Now    string
	ID     int64
}

type RolloutCompleteParams struct {
	Reason string
	Now    string
	ID     int64
}

type RolloutCountByStateRow struct {
	State    string
	Rollouts int64
}

// RolloutInsertParams is a new rollout; ID is 0 for the next id, or a dry run's own (a
// negative id, never committed, so that a plan draws no id a real rollout would have).
type RolloutInsertParams struct {
	ID            int64
	Module        string
	Placement     string
	FromRevision  int64
	FromRevisions string
	ToRevision    int64
	RollbackOf    int64
	Policy        string
	Reason        string
	Now           string
}

type RolloutLatestOfPlacementParams struct {
	Placement string
	Module    string
}

type RolloutPromoteParams struct {
	Reason string
	Now    string
	ID     int64
}

type AssignmentRevisionsOfPlacementParams struct {
	Placement  string
	Module     string
	ToRevision int64
}

type RolloutListActiveOfPlacementParams struct {
	Placement string
	Module    string
}

type RolloutListPageParams struct {
	Before    int64
	State     string
	Module    string
	Placement string
	Max       int64
}

type RolloutNode struct {
	Rollout      int64
	Node         string
	FromRevision int64
	Wave         int64
	State        string
	Generation   int64
	Reason       string
	StartedAt    sql.NullString
	EndedAt      sql.NullString
}

type RolloutNodeAdvanceParams struct {
	Wave    int64
	Now     sql.NullString
	Rollout int64
	Nodes   []string
}

type RolloutNodeCountsRow struct {
	Nodes             int64
	Pending           int64
	InFlight          int64
	Done              int64
	Failed            int64
	FirstWaveInFlight int64
	LastWave          int64
}

type RolloutNodeDeleteGoneParams struct {
	Rollout int64
	Module  string
}

type RolloutNodeInsertFromPlacementParams struct {
	Rollout    int64
	Placement  string
	Module     string
	ToRevision int64
}

type RolloutNodeInsertOnNodesParams struct {
	Rollout      int64
	FromRevision int64
	Nodes        []string
}

// RolloutNodeListParams pages through a rollout's nodes: at most Max of them.
type RolloutNodeListParams struct {
	Rollout int64
	Max     int64
}

// RolloutNodePin is a rollout's node at the revision it had before the rollout.
type RolloutNodePin struct {
	Node         string
	FromRevision int64
}

type RolloutNodeListFailedReasonsRow struct {
	Node   string
	Reason string
}

type RolloutNodeMarkDoneParams struct {
	Now     sql.NullString
	Rollout int64
	Module  string
}

type RolloutNodeMarkFailedParams struct {
	Now         sql.NullString
	Module      string
	LastAttempt int64
	LateReason  string
	Rollout     int64
	Deadline    sql.NullString
}

type RolloutNodePageParams struct {
	Rollout int64
	After   string
	Max     int64
}

type RolloutNodeRevertParams struct {
	Now     sql.NullString
	Reason  string
	Rollout int64
	Nodes   []string
}

type RolloutOfNodeRow struct {
	ID           int64
	Module       string
	FromRevision int64
	ToRevision   int64
	State        string
	NodeState    string
	Wave         int64
	Reason       string
}

type RolloutPauseParams struct {
	Reason string
	Now    string
	ID     int64
}

type RolloutResumeParams struct {
	Reason string
	Now    string
	ID     int64
}

type RolloutSetCountsParams struct {
	Nodes    int64
	Done     int64
	InFlight int64
	Failed   int64
	ID       int64
}

type RolloutTransitionListParams struct {
	Rollout int64
	Max     int64
}

type RolloutTransitionListRow struct {
	ID        int64
	FromState string
	ToState   string
	Reason    string
	At        string
}

type RolloutWaveListRow struct {
	Wave         int64
	State        string
	Nodes        int64
	FirstStarted string
	LastEnded    string
}

type Send struct {
	ID         int64
	Node       string
	Generation int64
	Digest     string
	Resources  int64
	ComposedBy string
	SentAt     string
	Outcome    string
	OutcomeAt  sql.NullString
	Reason     string
	Signature  string
}

type SendCountByOutcomeRow struct {
	Outcome string
	Sends   int64
}

type SendGetParams struct {
	Node string
	ID   int64
}

type SendInsertParams struct {
	Node       string
	Generation int64
	Digest     string
	Resources  int64
	ComposedBy string
	SentAt     string
	Signature  string
}

type SendInsertRefusedParams struct {
	Node       string
	Generation int64
	Digest     string
	Resources  int64
	ComposedBy string
	SentAt     string
	At         sql.NullString
	Reason     string
}

type SendListByNodeParams struct {
	Node string
	Max  int64
}

type SendMarkAppliedParams struct {
	At         sql.NullString
	Node       string
	Generation int64
	Digest     string
}

type SendMarkRefusedParams struct {
	At     sql.NullString
	Reason string
	Node   string
	ID     int64
}

type SendMarkSupersededParams struct {
	At         sql.NullString
	Node       string
	Generation int64
}

type SendPruneParams struct {
	Keep   int64
	After  int64
	Until  int64
	Cutoff sql.NullString
}

type SendPruneWindowEndParams struct {
	After int64
	Batch int64
}

type SendPruneWindowEndRow struct {
	ID int64
	At string
}

type SendRefusedExistsParams struct {
	Node       string
	Generation int64
	Digest     string
}

type Transition struct {
	ID        int64
	Node      string
	Module    string
	Resource  string
	FromState sql.NullString
	ToState   string
	At        string
	ReportID  sql.NullInt64
	Reason    string
}

type TransitionListByNodeParams struct {
	Node string
	Max  int64
}

type TransitionPruneParams struct {
	Keep   int64
	After  int64
	Until  int64
	Cutoff string
}

type TransitionPruneWindowEndParams struct {
	After int64
	Batch int64
}

type TransitionPruneWindowEndRow struct {
	ID int64
	At string
}

type WebSessionInsertParams struct {
	IDHash    string
	CreatedAt string
	ExpiresAt string
	Operator  string
	Role      string
	TokenID   int64
	Via       string
}

type WebSessionGetParams struct {
	IDHash string
	Now    string
}

type WebSessionGetRow struct {
	Operator  string
	Role      string
	TokenID   int64
	Via       string
	BoundRole string
	Modules   string
	Nodes     string
}

type WorkerLease struct {
	Worker    string
	Holder    string
	TakenAt   string
	ExpiresAt string
}
