package sqlite

import (
	"context"

	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/db/sqlite/internal/sqlitesqlc"
)

// queries runs the store's statements on this engine, converting its generated rows to the driver's.
type queries struct{ q *sqlitesqlc.Queries }

func (q queries) AssignmentCountByModule(ctx context.Context) ([]driver.AssignmentCountByModuleRow, error) {
	rs, err := q.q.AssignmentCountByModule(ctx)
	return driver.Each(rs, err, func(r sqlitesqlc.AssignmentCountByModuleRow) driver.AssignmentCountByModuleRow {
		return driver.AssignmentCountByModuleRow(r)
	})
}

func (q queries) AssignmentCountBySource(ctx context.Context, arg driver.AssignmentCountBySourceParams) (int64, error) {
	return q.q.AssignmentCountBySource(ctx, sqlitesqlc.AssignmentCountBySourceParams(arg))
}

func (q queries) AssignmentDeclaration(ctx context.Context, node string) ([]driver.AssignmentDeclarationRow, error) {
	rs, err := q.q.AssignmentDeclaration(ctx, node)
	return driver.Each(rs, err, fromAssignmentDeclarationRow)
}

func (q queries) AssignmentDelete(ctx context.Context, arg driver.AssignmentDeleteParams) (int64, error) {
	return q.q.AssignmentDelete(ctx, sqlitesqlc.AssignmentDeleteParams(arg))
}

func (q queries) AssignmentDeleteByNode(ctx context.Context, node string) error {
	return q.q.AssignmentDeleteByNode(ctx, node)
}

func (q queries) AssignmentDeleteOnNodes(ctx context.Context, arg driver.AssignmentDeleteOnNodesParams) error {
	return q.q.AssignmentDeleteOnNodes(ctx, sqlitesqlc.AssignmentDeleteOnNodesParams{Module: arg.Module, Source: arg.Source, Nodes: list(arg.Nodes)})
}

func (q queries) AssignmentGet(ctx context.Context, arg driver.AssignmentGetParams) (driver.Assignment, error) {
	r, err := q.q.AssignmentGet(ctx, sqlitesqlc.AssignmentGetParams(arg))
	return fromAssignment(r), err
}

func (q queries) AssignmentInsert(ctx context.Context, arg driver.AssignmentInsertParams) error {
	return q.q.AssignmentInsert(ctx, sqlitesqlc.AssignmentInsertParams{Node: arg.Node, Module: arg.Module, Taken: driver.Flag(arg.Taken), AssignedAt: arg.AssignedAt, Revision: arg.Revision, Source: arg.Source})
}

func (q queries) AssignmentInsertOnNodes(ctx context.Context, arg driver.AssignmentInsertOnNodesParams) error {
	return q.q.AssignmentInsertOnNodes(ctx, sqlitesqlc.AssignmentInsertOnNodesParams{Module: arg.Module, Taken: driver.Flag(arg.Taken), AssignedAt: arg.AssignedAt, Revision: arg.Revision, Source: arg.Source, Nodes: list(arg.Nodes)})
}

func (q queries) AssignmentListBehind(ctx context.Context, arg driver.AssignmentListBehindParams) ([]driver.AssignmentListBehindRow, error) {
	rs, err := q.q.AssignmentListBehind(ctx, sqlitesqlc.AssignmentListBehindParams(arg))
	return driver.Each(rs, err, func(r sqlitesqlc.AssignmentListBehindRow) driver.AssignmentListBehindRow {
		return driver.AssignmentListBehindRow(r)
	})
}

func (q queries) AssignmentListByModule(ctx context.Context, module string) ([]driver.AssignmentListByModuleRow, error) {
	rs, err := q.q.AssignmentListByModule(ctx, module)
	return driver.Each(rs, err, fromAssignmentListByModuleRow)
}

func (q queries) AssignmentListByNode(ctx context.Context, node string) ([]driver.AssignmentListByNodeRow, error) {
	rs, err := q.q.AssignmentListByNode(ctx, node)
	return driver.Each(rs, err, fromAssignmentListByNodeRow)
}

func (q queries) AssignmentListByNodes(ctx context.Context, nodes []string) ([]driver.AssignmentListByNodesRow, error) {
	rs, err := q.q.AssignmentListByNodes(ctx, list(nodes))
	return driver.Each(rs, err, fromAssignmentListByNodesRow)
}

func (q queries) AssignmentListBySource(ctx context.Context, arg driver.AssignmentListBySourceParams) ([]driver.AssignmentListBySourceRow, error) {
	rs, err := q.q.AssignmentListBySource(ctx, sqlitesqlc.AssignmentListBySourceParams(arg))
	return driver.Each(rs, err, func(r sqlitesqlc.AssignmentListBySourceRow) driver.AssignmentListBySourceRow {
		return driver.AssignmentListBySourceRow(r)
	})
}

func (q queries) AssignmentListOfModuleOnNodes(ctx context.Context, arg driver.AssignmentListOfModuleOnNodesParams) ([]driver.AssignmentListOfModuleOnNodesRow, error) {
	rs, err := q.q.AssignmentListOfModuleOnNodes(ctx, sqlitesqlc.AssignmentListOfModuleOnNodesParams{Module: arg.Module, Nodes: list(arg.Nodes)})
	return driver.Each(rs, err, func(r sqlitesqlc.AssignmentListOfModuleOnNodesRow) driver.AssignmentListOfModuleOnNodesRow {
		return driver.AssignmentListOfModuleOnNodesRow(r)
	})
}

func (q queries) AssignmentListOrphaned(ctx context.Context, max int64) ([]driver.AssignmentListOrphanedRow, error) {
	rs, err := q.q.AssignmentListOrphaned(ctx, max)
	return driver.Each(rs, err, func(r sqlitesqlc.AssignmentListOrphanedRow) driver.AssignmentListOrphanedRow {
		return driver.AssignmentListOrphanedRow(r)
	})
}

func (q queries) AssignmentListTakenDiffers(ctx context.Context, arg driver.AssignmentListTakenDiffersParams) ([]string, error) {
	return q.q.AssignmentListTakenDiffers(ctx, sqlitesqlc.AssignmentListTakenDiffersParams{Source: arg.Source, Module: arg.Module, Taken: driver.Flag(arg.Taken), Max: arg.Max})
}

func (q queries) AssignmentOthersOfModule(ctx context.Context, module string) ([]driver.AssignmentOthersOfModuleRow, error) {
	rs, err := q.q.AssignmentOthersOfModule(ctx, module)
	return driver.Each(rs, err, func(r sqlitesqlc.AssignmentOthersOfModuleRow) driver.AssignmentOthersOfModuleRow {
		return driver.AssignmentOthersOfModuleRow(r)
	})
}

func (q queries) AssignmentPinNodes(ctx context.Context, arg driver.AssignmentPinNodesParams) error {
	return q.q.AssignmentPinNodes(ctx, sqlitesqlc.AssignmentPinNodesParams{Revision: arg.Revision, Module: arg.Module, Nodes: list(arg.Nodes)})
}

func (q queries) AssignmentSetTaken(ctx context.Context, arg driver.AssignmentSetTakenParams) error {
	return q.q.AssignmentSetTaken(ctx, sqlitesqlc.AssignmentSetTakenParams{Taken: driver.Flag(arg.Taken), Node: arg.Node, Module: arg.Module})
}

func (q queries) AssignmentSetTakenOnNodes(ctx context.Context, arg driver.AssignmentSetTakenOnNodesParams) error {
	return q.q.AssignmentSetTakenOnNodes(ctx, sqlitesqlc.AssignmentSetTakenOnNodesParams{Taken: driver.Flag(arg.Taken), Module: arg.Module, Source: arg.Source, Nodes: list(arg.Nodes)})
}

func (q queries) DriftCountsByNodesSince(ctx context.Context, arg driver.DriftCountsByNodesSinceParams) ([]driver.DriftCountsByNodesSinceRow, error) {
	rs, err := q.q.DriftCountsByNodesSince(ctx, sqlitesqlc.DriftCountsByNodesSinceParams{Nodes: list(arg.Nodes), Since: arg.Since, Threshold: arg.Threshold})
	return driver.Each(rs, err, func(r sqlitesqlc.DriftCountsByNodesSinceRow) driver.DriftCountsByNodesSinceRow {
		return driver.DriftCountsByNodesSinceRow(r)
	})
}

func (q queries) ContainerStatusListByNode(ctx context.Context, node string) ([]driver.ContainerStatus, error) {
	rs, err := q.q.ContainerStatusListByNode(ctx, node)
	return driver.Each(rs, err, func(r sqlitesqlc.ContainerStatus) driver.ContainerStatus { return driver.ContainerStatus(r) })
}

func (q queries) ContainerStatusRecord(ctx context.Context, arg driver.ContainerStatusRecordParams) error {
	return q.q.ContainerStatusRecord(ctx, sqlitesqlc.ContainerStatusRecordParams(arg))
}

func (q queries) DriftInsert(ctx context.Context, arg driver.DriftInsertParams) error {
	return q.q.DriftInsert(ctx, sqlitesqlc.DriftInsertParams(arg))
}

func (q queries) DriftListByNode(ctx context.Context, arg driver.DriftListByNodeParams) ([]driver.Drift, error) {
	rs, err := q.q.DriftListByNode(ctx, sqlitesqlc.DriftListByNodeParams(arg))
	return driver.Each(rs, err, func(r sqlitesqlc.Drift) driver.Drift { return driver.Drift(r) })
}

func (q queries) DriftPrune(ctx context.Context, arg driver.DriftPruneParams) (int64, error) {
	return q.q.DriftPrune(ctx, sqlitesqlc.DriftPruneParams(arg))
}

func (q queries) DriftPruneWindowEnd(ctx context.Context, arg driver.DriftPruneWindowEndParams) (driver.DriftPruneWindowEndRow, error) {
	r, err := q.q.DriftPruneWindowEnd(ctx, sqlitesqlc.DriftPruneWindowEndParams(arg))
	return driver.DriftPruneWindowEndRow(r), err
}

func (q queries) DriftTopSince(ctx context.Context, arg driver.DriftTopSinceParams) ([]driver.DriftTopSinceRow, error) {
	rs, err := q.q.DriftTopSince(ctx, sqlitesqlc.DriftTopSinceParams(arg))
	return driver.Each(rs, err, func(r sqlitesqlc.DriftTopSinceRow) driver.DriftTopSinceRow { return driver.DriftTopSinceRow(r) })
}

func (q queries) LeaseList(ctx context.Context) ([]driver.WorkerLease, error) {
	rs, err := q.q.LeaseList(ctx)
	return driver.Each(rs, err, func(r sqlitesqlc.WorkerLease) driver.WorkerLease { return driver.WorkerLease(r) })
}

func (q queries) LeaseRelease(ctx context.Context, arg driver.LeaseReleaseParams) error {
	return q.q.LeaseRelease(ctx, sqlitesqlc.LeaseReleaseParams(arg))
}

func (q queries) LeaseTake(ctx context.Context, arg driver.LeaseTakeParams) (int64, error) {
	return q.q.LeaseTake(ctx, sqlitesqlc.LeaseTakeParams(arg))
}

func (q queries) ModuleGet(ctx context.Context, name string) (driver.Module, error) {
	r, err := q.q.ModuleGet(ctx, name)
	return driver.Module(r), err
}

func (q queries) ModuleList(ctx context.Context) ([]driver.Module, error) {
	rs, err := q.q.ModuleList(ctx)
	return driver.Each(rs, err, func(r sqlitesqlc.Module) driver.Module { return driver.Module(r) })
}

func (q queries) ModuleListBehind(ctx context.Context) ([]driver.ModuleListBehindRow, error) {
	rs, err := q.q.ModuleListBehind(ctx)
	return driver.Each(rs, err, func(r sqlitesqlc.ModuleListBehindRow) driver.ModuleListBehindRow {
		return driver.ModuleListBehindRow(r)
	})
}

func (q queries) ModuleOverviewGet(ctx context.Context, name string) (driver.ModuleOverviewGetRow, error) {
	r, err := q.q.ModuleOverviewGet(ctx, name)
	return driver.ModuleOverviewGetRow(r), err
}

func (q queries) ModuleOverviewList(ctx context.Context, arg driver.ModuleOverviewListParams) ([]driver.ModuleOverviewListRow, error) {
	rs, err := q.q.ModuleOverviewList(ctx, sqlitesqlc.ModuleOverviewListParams(arg))
	return driver.Each(rs, err, func(r sqlitesqlc.ModuleOverviewListRow) driver.ModuleOverviewListRow {
		return driver.ModuleOverviewListRow(r)
	})
}

func (q queries) ModuleRevisionGet(ctx context.Context, arg driver.ModuleRevisionGetParams) (driver.ModuleRevision, error) {
	r, err := q.q.ModuleRevisionGet(ctx, sqlitesqlc.ModuleRevisionGetParams(arg))
	return driver.ModuleRevision(r), err
}

func (q queries) ModuleRevisionInsert(ctx context.Context, arg driver.ModuleRevisionInsertParams) error {
	return q.q.ModuleRevisionInsert(ctx, sqlitesqlc.ModuleRevisionInsertParams(arg))
}

func (q queries) ModuleRevisionListPage(ctx context.Context, arg driver.ModuleRevisionListPageParams) ([]driver.ModuleRevisionListPageRow, error) {
	rs, err := q.q.ModuleRevisionListPage(ctx, sqlitesqlc.ModuleRevisionListPageParams(arg))
	return driver.Each(rs, err, func(r sqlitesqlc.ModuleRevisionListPageRow) driver.ModuleRevisionListPageRow {
		return driver.ModuleRevisionListPageRow(r)
	})
}

func (q queries) ModuleRevisionResourcesInsert(ctx context.Context, arg driver.ModuleRevisionResourcesInsertParams) error {
	return q.q.ModuleRevisionResourcesInsert(ctx, sqlitesqlc.ModuleRevisionResourcesInsertParams(arg))
}

func (q queries) ModuleRevisionsWithoutResources(ctx context.Context) ([]driver.ModuleRevisionsWithoutResourcesRow, error) {
	rs, err := q.q.ModuleRevisionsWithoutResources(ctx)
	return driver.Each(rs, err, func(r sqlitesqlc.ModuleRevisionsWithoutResourcesRow) driver.ModuleRevisionsWithoutResourcesRow {
		return driver.ModuleRevisionsWithoutResourcesRow(r)
	})
}

func (q queries) ModuleUpsert(ctx context.Context, arg driver.ModuleUpsertParams) (int64, error) {
	return q.q.ModuleUpsert(ctx, sqlitesqlc.ModuleUpsertParams(arg))
}

func (q queries) NodeBumpGeneration(ctx context.Context, name string) (int64, error) {
	return q.q.NodeBumpGeneration(ctx, name)
}

func (q queries) NodeBumpGenerations(ctx context.Context, nodes []string) ([]driver.NodeBumpGenerationsRow, error) {
	rs, err := q.q.NodeBumpGenerations(ctx, list(nodes))
	return driver.Each(rs, err, func(r sqlitesqlc.NodeBumpGenerationsRow) driver.NodeBumpGenerationsRow {
		return driver.NodeBumpGenerationsRow(r)
	})
}

func (q queries) NodeExistsByTokenHash(ctx context.Context, tokenHash string) (bool, error) {
	return q.q.NodeExistsByTokenHash(ctx, tokenHash)
}

func (q queries) NodeGeneration(ctx context.Context, name string) (int64, error) {
	return q.q.NodeGeneration(ctx, name)
}

func (q queries) NodeGenerationList(ctx context.Context) ([]driver.NodeGenerationListRow, error) {
	rs, err := q.q.NodeGenerationList(ctx)
	return driver.Each(rs, err, func(r sqlitesqlc.NodeGenerationListRow) driver.NodeGenerationListRow {
		return driver.NodeGenerationListRow(r)
	})
}

func (q queries) NodeGenerationTotal(ctx context.Context) (driver.NodeGenerationTotalRow, error) {
	r, err := q.q.NodeGenerationTotal(ctx)
	return driver.NodeGenerationTotalRow(r), err
}

func (q queries) NodeGet(ctx context.Context, name string) (driver.Node, error) {
	r, err := q.q.NodeGet(ctx, name)
	return driver.Node(r), err
}

func (q queries) NodeGetAny(ctx context.Context, name string) (driver.Node, error) {
	r, err := q.q.NodeGetAny(ctx, name)
	return driver.Node(r), err
}

func (q queries) NodeInsert(ctx context.Context, arg driver.NodeInsertParams) error {
	return q.q.NodeInsert(ctx, sqlitesqlc.NodeInsertParams(arg))
}

func (q queries) NodeLabelList(ctx context.Context) ([]driver.NodeLabelListRow, error) {
	rs, err := q.q.NodeLabelList(ctx)
	return driver.Each(rs, err, func(r sqlitesqlc.NodeLabelListRow) driver.NodeLabelListRow { return driver.NodeLabelListRow(r) })
}

func (q queries) NodeListByNames(ctx context.Context, nodes []string) ([]driver.Node, error) {
	rs, err := q.q.NodeListByNames(ctx, list(nodes))
	return driver.Each(rs, err, func(r sqlitesqlc.Node) driver.Node { return driver.Node(r) })
}

func (q queries) NodeMarkDeleted(ctx context.Context, arg driver.NodeMarkDeletedParams) error {
	return q.q.NodeMarkDeleted(ctx, sqlitesqlc.NodeMarkDeletedParams(arg))
}

func (q queries) NodeNamesBySeverity(ctx context.Context, arg driver.NodeNamesBySeverityParams) ([]driver.NodeNamesBySeverityRow, error) {
	rs, err := q.q.NodeNamesBySeverity(ctx, sqlitesqlc.NodeNamesBySeverityParams{SilentBefore: arg.SilentBefore, Status: arg.Status,
		NotConverged: driver.Flag(arg.NotConverged), AfterSeverity: arg.AfterSeverity, After: arg.After, Max: arg.Max})
	return driver.Each(rs, err, func(r sqlitesqlc.NodeNamesBySeverityRow) driver.NodeNamesBySeverityRow {
		return driver.NodeNamesBySeverityRow(r)
	})
}

func (q queries) NodeNamesByStatus(ctx context.Context, arg driver.NodeNamesByStatusParams) ([]string, error) {
	return q.q.NodeNamesByStatus(ctx, sqlitesqlc.NodeNamesByStatusParams{SilentBefore: arg.SilentBefore, After: arg.After, Status: arg.Status, NotConverged: driver.Flag(arg.NotConverged), Max: arg.Max})
}

func (q queries) NodeRaiseGeneration(ctx context.Context, arg driver.NodeRaiseGenerationParams) (int64, error) {
	return q.q.NodeRaiseGeneration(ctx, sqlitesqlc.NodeRaiseGenerationParams(arg))
}

func (q queries) NodeRegisterAgain(ctx context.Context, arg driver.NodeRegisterAgainParams) error {
	return q.q.NodeRegisterAgain(ctx, sqlitesqlc.NodeRegisterAgainParams(arg))
}

func (q queries) NodeRegistrationEnd(ctx context.Context, arg driver.NodeRegistrationEndParams) error {
	return q.q.NodeRegistrationEnd(ctx, sqlitesqlc.NodeRegistrationEndParams(arg))
}

func (q queries) NodeRegistrationInsert(ctx context.Context, arg driver.NodeRegistrationInsertParams) error {
	return q.q.NodeRegistrationInsert(ctx, sqlitesqlc.NodeRegistrationInsertParams(arg))
}

func (q queries) NodeSetApplied(ctx context.Context, arg driver.NodeSetAppliedParams) error {
	return q.q.NodeSetApplied(ctx, sqlitesqlc.NodeSetAppliedParams(arg))
}

func (q queries) NodeSetHost(ctx context.Context, arg driver.NodeSetHostParams) error {
	return q.q.NodeSetHost(ctx, sqlitesqlc.NodeSetHostParams(arg))
}

func (q queries) NodeSetLabels(ctx context.Context, arg driver.NodeSetLabelsParams) error {
	return q.q.NodeSetLabels(ctx, sqlitesqlc.NodeSetLabelsParams(arg))
}

func (q queries) NodeSetReported(ctx context.Context, arg driver.NodeSetReportedParams) error {
	return q.q.NodeSetReported(ctx, sqlitesqlc.NodeSetReportedParams(arg))
}

func (q queries) NodeSetVars(ctx context.Context, arg driver.NodeSetVarsParams) error {
	return q.q.NodeSetVars(ctx, sqlitesqlc.NodeSetVarsParams(arg))
}

func (q queries) NodeStatusCounts(ctx context.Context, silentBefore string) ([]driver.NodeStatusCountsRow, error) {
	rs, err := q.q.NodeStatusCounts(ctx, silentBefore)
	return driver.Each(rs, err, func(r sqlitesqlc.NodeStatusCountsRow) driver.NodeStatusCountsRow {
		return driver.NodeStatusCountsRow(r)
	})
}

func (q queries) NodeStatusList(ctx context.Context) ([]driver.NodeStatusListRow, error) {
	rs, err := q.q.NodeStatusList(ctx)
	return driver.Each(rs, err, func(r sqlitesqlc.NodeStatusListRow) driver.NodeStatusListRow { return driver.NodeStatusListRow(r) })
}

func (q queries) NodeTokenCheck(ctx context.Context, name string) (driver.NodeTokenCheckRow, error) {
	r, err := q.q.NodeTokenCheck(ctx, name)
	return driver.NodeTokenCheckRow(r), err
}

func (q queries) PlacementDelete(ctx context.Context, name string) (int64, error) {
	return q.q.PlacementDelete(ctx, name)
}

func (q queries) PlacementGet(ctx context.Context, name string) (driver.Placement, error) {
	r, err := q.q.PlacementGet(ctx, name)
	return fromPlacement(r), err
}

func (q queries) PlacementList(ctx context.Context) ([]driver.Placement, error) {
	rs, err := q.q.PlacementList(ctx)
	return driver.Each(rs, err, fromPlacement)
}

func (q queries) PlacementListByModule(ctx context.Context, module string) ([]driver.Placement, error) {
	rs, err := q.q.PlacementListByModule(ctx, module)
	return driver.Each(rs, err, fromPlacement)
}

func (q queries) PlacementListPage(ctx context.Context, arg driver.PlacementListPageParams) ([]driver.Placement, error) {
	rs, err := q.q.PlacementListPage(ctx, sqlitesqlc.PlacementListPageParams(arg))
	return driver.Each(rs, err, fromPlacement)
}

func (q queries) PlacementUpsert(ctx context.Context, arg driver.PlacementUpsertParams) error {
	return q.q.PlacementUpsert(ctx, sqlitesqlc.PlacementUpsertParams{Name: arg.Name, Module: arg.Module, Selector: arg.Selector, Taken: driver.Flag(arg.Taken), Rollout: arg.Rollout, Now: arg.Now})
}

func (q queries) ReportGet(ctx context.Context, id int64) (driver.Report, error) {
	r, err := q.q.ReportGet(ctx, id)
	return driver.Report(r), err
}

func (q queries) ReportInsert(ctx context.Context, arg driver.ReportInsertParams) (int64, error) {
	return q.q.ReportInsert(ctx, sqlitesqlc.ReportInsertParams(arg))
}

func (q queries) ReportListByNode(ctx context.Context, arg driver.ReportListByNodeParams) ([]driver.Report, error) {
	rs, err := q.q.ReportListByNode(ctx, sqlitesqlc.ReportListByNodeParams(arg))
	return driver.Each(rs, err, func(r sqlitesqlc.Report) driver.Report { return driver.Report(r) })
}

func (q queries) ReportListLatestByNodes(ctx context.Context, nodes []string) ([]driver.Report, error) {
	rs, err := q.q.ReportListLatestByNodes(ctx, list(nodes))
	return driver.Each(rs, err, func(r sqlitesqlc.Report) driver.Report { return driver.Report(r) })
}

func (q queries) ReportPrune(ctx context.Context, arg driver.ReportPruneParams) (int64, error) {
	return q.q.ReportPrune(ctx, sqlitesqlc.ReportPruneParams(arg))
}

func (q queries) ReportPruneWindowEnd(ctx context.Context, arg driver.ReportPruneWindowEndParams) (driver.ReportPruneWindowEndRow, error) {
	r, err := q.q.ReportPruneWindowEnd(ctx, sqlitesqlc.ReportPruneWindowEndParams(arg))
	return driver.ReportPruneWindowEndRow(r), err
}

func (q queries) ReportRepeat(ctx context.Context, arg driver.ReportRepeatParams) error {
	return q.q.ReportRepeat(ctx, sqlitesqlc.ReportRepeatParams(arg))
}

func (q queries) ReportStandingRows(ctx context.Context, since string) ([]driver.ReportStandingRowsRow, error) {
	rs, err := q.q.ReportStandingRows(ctx, since)
	return driver.Each(rs, err, func(r sqlitesqlc.ReportStandingRowsRow) driver.ReportStandingRowsRow {
		return driver.ReportStandingRowsRow(r)
	})
}

func (q queries) ResourceStateApplyAllPending(ctx context.Context, arg driver.ResourceStateApplyAllPendingParams) (int64, error) {
	return q.q.ResourceStateApplyAllPending(ctx, sqlitesqlc.ResourceStateApplyAllPendingParams(arg))
}

func (q queries) ResourceStateApplyPending(ctx context.Context, arg driver.ResourceStateApplyPendingParams) (int64, error) {
	return q.q.ResourceStateApplyPending(ctx, sqlitesqlc.ResourceStateApplyPendingParams{Since: arg.Since, Attempt: arg.Attempt, ReportID: arg.ReportID, Node: arg.Node, Refs: list(arg.Refs)})
}

func (q queries) ResourceStateApplyPendingByKey(ctx context.Context, arg driver.ResourceStateApplyPendingParams) (int64, error) {
	return q.q.ResourceStateApplyPendingByKey(ctx, sqlitesqlc.ResourceStateApplyPendingByKeyParams{Since: arg.Since, Attempt: arg.Attempt, ReportID: arg.ReportID, Node: arg.Node, Refs: list(arg.Refs)})
}

func (q queries) ResourceStateBlockedCounts(ctx context.Context) ([]driver.ResourceStateBlockedCountsRow, error) {
	rs, err := q.q.ResourceStateBlockedCounts(ctx)
	return driver.Each(rs, err, func(r sqlitesqlc.ResourceStateBlockedCountsRow) driver.ResourceStateBlockedCountsRow {
		return driver.ResourceStateBlockedCountsRow(r)
	})
}

func (q queries) ResourceStateBlockedCountsByNodes(ctx context.Context, nodes []string) ([]driver.ResourceStateBlockedCountsByNodesRow, error) {
	rs, err := q.q.ResourceStateBlockedCountsByNodes(ctx, list(nodes))
	return driver.Each(rs, err, func(r sqlitesqlc.ResourceStateBlockedCountsByNodesRow) driver.ResourceStateBlockedCountsByNodesRow {
		return driver.ResourceStateBlockedCountsByNodesRow(r)
	})
}

func (q queries) ResourceStateClearRetry(ctx context.Context, node string) error {
	return q.q.ResourceStateClearRetry(ctx, node)
}

func (q queries) ResourceStateCountAttempts(ctx context.Context, arg driver.ResourceStateCountAttemptsParams) error {
	return q.q.ResourceStateCountAttempts(ctx, sqlitesqlc.ResourceStateCountAttemptsParams{ReportID: arg.ReportID, Node: arg.Node, Refs: list(arg.Refs)})
}

func (q queries) ResourceStateCountAttemptsByKey(ctx context.Context, arg driver.ResourceStateCountAttemptsParams) error {
	return q.q.ResourceStateCountAttemptsByKey(ctx, sqlitesqlc.ResourceStateCountAttemptsByKeyParams{ReportID: arg.ReportID, Node: arg.Node, Refs: list(arg.Refs)})
}

func (q queries) ResourceStateCountByNode(ctx context.Context, node string) (int64, error) {
	return q.q.ResourceStateCountByNode(ctx, node)
}

func (q queries) ResourceStateDeclare(ctx context.Context, arg driver.ResourceStateDeclareParams) error {
	return q.q.ResourceStateDeclare(ctx, sqlitesqlc.ResourceStateDeclareParams{Since: arg.Since, Reason: arg.Reason, Nodes: list(arg.Nodes), Module: arg.Module, Revision: arg.Revision, Every: driver.Flag(arg.Every), Names: list(arg.Names)})
}

func (q queries) ResourceStateGet(ctx context.Context, arg driver.ResourceStateGetParams) (driver.ResourceState, error) {
	r, err := q.q.ResourceStateGet(ctx, sqlitesqlc.ResourceStateGetParams(arg))
	return fromResourceState(r), err
}

func (q queries) ResourceStateListByNode(ctx context.Context, node string) ([]driver.ResourceState, error) {
	rs, err := q.q.ResourceStateListByNode(ctx, node)
	return driver.Each(rs, err, fromResourceStateListed)
}

func (q queries) ResourceStateHeldFoundByNode(ctx context.Context, node string) ([]driver.ResourceStateHeldFoundByNodeRow, error) {
	rs, err := q.q.ResourceStateHeldFoundByNode(ctx, node)
	return driver.Each(rs, err, func(r sqlitesqlc.ResourceStateHeldFoundByNodeRow) driver.ResourceStateHeldFoundByNodeRow {
		return driver.ResourceStateHeldFoundByNodeRow(r)
	})
}

func (q queries) ResourceStateListHeld(ctx context.Context) ([]driver.ResourceStateListHeldRow, error) {
	rs, err := q.q.ResourceStateListHeld(ctx)
	return driver.Each(rs, err, func(r sqlitesqlc.ResourceStateListHeldRow) driver.ResourceStateListHeldRow {
		return driver.ResourceStateListHeldRow(r)
	})
}

func (q queries) ResourceStateListNotFineByNode(ctx context.Context, node string) ([]driver.ResourceState, error) {
	rs, err := q.q.ResourceStateListNotFineByNode(ctx, node)
	return driver.Each(rs, err, fromResourceState)
}

func (q queries) ResourceStateListNotFineByNodes(ctx context.Context, nodes []string) ([]driver.ResourceState, error) {
	rs, err := q.q.ResourceStateListNotFineByNodes(ctx, list(nodes))
	return driver.Each(rs, err, func(r sqlitesqlc.ResourceStateListNotFineByNodesRow) driver.ResourceState {
		return fromResourceStateListed(sqlitesqlc.ResourceStateListByNodeRow(r))
	})
}

func (q queries) ResourceStateListStuck(ctx context.Context) ([]driver.ResourceStateListStuckRow, error) {
	rs, err := q.q.ResourceStateListStuck(ctx)
	return driver.Each(rs, err, fromResourceStateListStuckRow)
}

func (q queries) ResourceStateListStuckByNode(ctx context.Context, node string) ([]driver.ResourceStateListStuckByNodeRow, error) {
	rs, err := q.q.ResourceStateListStuckByNode(ctx, node)
	return driver.Each(rs, err, func(r sqlitesqlc.ResourceStateListStuckByNodeRow) driver.ResourceStateListStuckByNodeRow {
		return driver.ResourceStateListStuckByNodeRow(r)
	})
}

func (q queries) ResourceStateMoveOnNodes(ctx context.Context, arg driver.ResourceStateMoveOnNodesParams) error {
	return q.q.ResourceStateMoveOnNodes(ctx, sqlitesqlc.ResourceStateMoveOnNodesParams{Position: arg.Position, GroupName: arg.GroupName, Module: arg.Module, Resource: arg.Resource, Nodes: list(arg.Nodes)})
}

func (q queries) ResourceStateRecord(ctx context.Context, arg driver.ResourceStateRecordParams) error {
	return q.q.ResourceStateRecord(ctx, sqlitesqlc.ResourceStateRecordParams{State: arg.State, Since: arg.Since, Attempts: arg.Attempts, ConsecutiveFailures: arg.ConsecutiveFailures, FailingSince: arg.FailingSince, NeverApplied: driver.Flag(arg.NeverApplied), LastError: arg.LastError, HoldReason: arg.HoldReason, BlockedBy: arg.BlockedBy, RetryRequested: driver.Flag(arg.RetryRequested), ReportID: arg.ReportID, Reason: arg.Reason, HeldFound: arg.HeldFound, HeldFoundOmitted: arg.HeldFoundOmitted, Node: arg.Node, Module: arg.Module, Resource: arg.Resource})
}

func (q queries) ResourceStateRedeclareOnNodes(ctx context.Context, arg driver.ResourceStateRedeclareOnNodesParams) error {
	return q.q.ResourceStateRedeclareOnNodes(ctx, sqlitesqlc.ResourceStateRedeclareOnNodesParams{Kind: arg.Kind, SpecDigest: arg.SpecDigest, Position: arg.Position, GroupName: arg.GroupName, Since: arg.Since, Reason: arg.Reason, Module: arg.Module, Resource: arg.Resource, Nodes: list(arg.Nodes)})
}

func (q queries) ResourceStateRemoveOnNodes(ctx context.Context, arg driver.ResourceStateRemoveOnNodesParams) error {
	return q.q.ResourceStateRemoveOnNodes(ctx, sqlitesqlc.ResourceStateRemoveOnNodesParams{Module: arg.Module, Nodes: list(arg.Nodes), Names: list(arg.Names)})
}

func (q queries) ResourceStateRequestRetry(ctx context.Context, arg driver.ResourceStateRequestRetryParams) (int64, error) {
	return q.q.ResourceStateRequestRetry(ctx, sqlitesqlc.ResourceStateRequestRetryParams(arg))
}

func (q queries) ResourceStateRetryList(ctx context.Context, node string) ([]driver.ResourceStateRetryListRow, error) {
	rs, err := q.q.ResourceStateRetryList(ctx, node)
	return driver.Each(rs, err, func(r sqlitesqlc.ResourceStateRetryListRow) driver.ResourceStateRetryListRow {
		return driver.ResourceStateRetryListRow(r)
	})
}

func (q queries) RolloutAbort(ctx context.Context, arg driver.RolloutAbortParams) (int64, error) {
	return q.q.RolloutAbort(ctx, sqlitesqlc.RolloutAbortParams(arg))
}

func (q queries) RolloutComplete(ctx context.Context, arg driver.RolloutCompleteParams) (int64, error) {
	return q.q.RolloutComplete(ctx, sqlitesqlc.RolloutCompleteParams(arg))
}

func (q queries) RolloutCountByState(ctx context.Context) ([]driver.RolloutCountByStateRow, error) {
	rs, err := q.q.RolloutCountByState(ctx)
	return driver.Each(rs, err, func(r sqlitesqlc.RolloutCountByStateRow) driver.RolloutCountByStateRow {
		return driver.RolloutCountByStateRow(r)
	})
}

func (q queries) RolloutGet(ctx context.Context, id int64) (driver.Rollout, error) {
	r, err := q.q.RolloutGet(ctx, id)
	return driver.Rollout(r), err
}

func (q queries) RolloutInsert(ctx context.Context, arg driver.RolloutInsertParams) (int64, error) {
	if arg.ID != 0 {
		return q.q.RolloutInsertPlanned(ctx, sqlitesqlc.RolloutInsertPlannedParams(arg))
	}
	return q.q.RolloutInsert(ctx, sqlitesqlc.RolloutInsertParams{Module: arg.Module, Placement: arg.Placement, FromRevision: arg.FromRevision,
		FromRevisions: arg.FromRevisions, ToRevision: arg.ToRevision, RollbackOf: arg.RollbackOf, Policy: arg.Policy, Reason: arg.Reason, Now: arg.Now})
}

func (q queries) RolloutLatestOfPlacement(ctx context.Context, arg driver.RolloutLatestOfPlacementParams) ([]driver.Rollout, error) {
	rs, err := q.q.RolloutLatestOfPlacement(ctx, sqlitesqlc.RolloutLatestOfPlacementParams(arg))
	return driver.Each(rs, err, func(r sqlitesqlc.Rollout) driver.Rollout { return driver.Rollout(r) })
}

func (q queries) RolloutPromote(ctx context.Context, arg driver.RolloutPromoteParams) (int64, error) {
	return q.q.RolloutPromote(ctx, sqlitesqlc.RolloutPromoteParams(arg))
}

func (q queries) AssignmentRevisionsOfPlacement(ctx context.Context, arg driver.AssignmentRevisionsOfPlacementParams) ([]int64, error) {
	return q.q.AssignmentRevisionsOfPlacement(ctx, sqlitesqlc.AssignmentRevisionsOfPlacementParams(arg))
}

func (q queries) RolloutLatestOfPlacements(ctx context.Context, placements []string) ([]driver.Rollout, error) {
	rs, err := q.q.RolloutLatestOfPlacements(ctx, list(placements))
	return driver.Each(rs, err, func(r sqlitesqlc.Rollout) driver.Rollout { return driver.Rollout(r) })
}

func (q queries) RolloutList(ctx context.Context, max int64) ([]driver.Rollout, error) {
	rs, err := q.q.RolloutList(ctx, max)
	return driver.Each(rs, err, func(r sqlitesqlc.Rollout) driver.Rollout { return driver.Rollout(r) })
}

func (q queries) RolloutListActive(ctx context.Context) ([]driver.Rollout, error) {
	rs, err := q.q.RolloutListActive(ctx)
	return driver.Each(rs, err, func(r sqlitesqlc.Rollout) driver.Rollout { return driver.Rollout(r) })
}

func (q queries) RolloutListActiveOfPlacement(ctx context.Context, arg driver.RolloutListActiveOfPlacementParams) ([]int64, error) {
	return q.q.RolloutListActiveOfPlacement(ctx, sqlitesqlc.RolloutListActiveOfPlacementParams(arg))
}

func (q queries) RolloutListPage(ctx context.Context, arg driver.RolloutListPageParams) ([]driver.Rollout, error) {
	rs, err := q.q.RolloutListPage(ctx, sqlitesqlc.RolloutListPageParams(arg))
	return driver.Each(rs, err, func(r sqlitesqlc.Rollout) driver.Rollout { return driver.Rollout(r) })
}

func (q queries) RolloutNodeAdvance(ctx context.Context, arg driver.RolloutNodeAdvanceParams) error {
	return q.q.RolloutNodeAdvance(ctx, sqlitesqlc.RolloutNodeAdvanceParams{Wave: arg.Wave, Now: arg.Now, Rollout: arg.Rollout, Nodes: list(arg.Nodes)})
}

func (q queries) RolloutNodeCounts(ctx context.Context, rollout int64) (driver.RolloutNodeCountsRow, error) {
	r, err := q.q.RolloutNodeCounts(ctx, rollout)
	return driver.RolloutNodeCountsRow(r), err
}

func (q queries) RolloutNodeDeleteGone(ctx context.Context, arg driver.RolloutNodeDeleteGoneParams) (int64, error) {
	return q.q.RolloutNodeDeleteGone(ctx, sqlitesqlc.RolloutNodeDeleteGoneParams(arg))
}

func (q queries) RolloutNodeInsertFromPlacement(ctx context.Context, arg driver.RolloutNodeInsertFromPlacementParams) (int64, error) {
	return q.q.RolloutNodeInsertFromPlacement(ctx, sqlitesqlc.RolloutNodeInsertFromPlacementParams(arg))
}

func (q queries) RolloutNodeInsertOnNodes(ctx context.Context, arg driver.RolloutNodeInsertOnNodesParams) error {
	return q.q.RolloutNodeInsertOnNodes(ctx, sqlitesqlc.RolloutNodeInsertOnNodesParams{Rollout: arg.Rollout, FromRevision: arg.FromRevision, Nodes: list(arg.Nodes)})
}

func (q queries) RolloutNodeList(ctx context.Context, rollout int64) ([]driver.RolloutNode, error) {
	rs, err := q.q.RolloutNodeList(ctx, rollout)
	return driver.Each(rs, err, func(r sqlitesqlc.RolloutNode) driver.RolloutNode { return driver.RolloutNode(r) })
}

func (q queries) RolloutNodeListAdvanced(ctx context.Context, arg driver.RolloutNodeListParams) ([]driver.RolloutNodePin, error) {
	rs, err := q.q.RolloutNodeListAdvanced(ctx, sqlitesqlc.RolloutNodeListAdvancedParams(arg))
	return driver.Each(rs, err, func(r sqlitesqlc.RolloutNodeListAdvancedRow) driver.RolloutNodePin {
		return driver.RolloutNodePin(r)
	})
}

func (q queries) RolloutNodeListFailed(ctx context.Context, arg driver.RolloutNodeListParams) ([]driver.RolloutNodePin, error) {
	rs, err := q.q.RolloutNodeListFailed(ctx, sqlitesqlc.RolloutNodeListFailedParams(arg))
	return driver.Each(rs, err, func(r sqlitesqlc.RolloutNodeListFailedRow) driver.RolloutNodePin {
		return driver.RolloutNodePin(r)
	})
}

func (q queries) RolloutNodeListFailedReasons(ctx context.Context, rollout int64) ([]driver.RolloutNodeListFailedReasonsRow, error) {
	rs, err := q.q.RolloutNodeListFailedReasons(ctx, rollout)
	return driver.Each(rs, err, func(r sqlitesqlc.RolloutNodeListFailedReasonsRow) driver.RolloutNodeListFailedReasonsRow {
		return driver.RolloutNodeListFailedReasonsRow(r)
	})
}

func (q queries) RolloutNodeListPending(ctx context.Context, arg driver.RolloutNodeListParams) ([]driver.RolloutNodePin, error) {
	rs, err := q.q.RolloutNodeListPending(ctx, sqlitesqlc.RolloutNodeListPendingParams(arg))
	return driver.Each(rs, err, func(r sqlitesqlc.RolloutNodeListPendingRow) driver.RolloutNodePin {
		return driver.RolloutNodePin(r)
	})
}

func (q queries) RolloutNodeMarkDone(ctx context.Context, arg driver.RolloutNodeMarkDoneParams) (int64, error) {
	return q.q.RolloutNodeMarkDone(ctx, sqlitesqlc.RolloutNodeMarkDoneParams(arg))
}

func (q queries) RolloutNodeMarkFailed(ctx context.Context, arg driver.RolloutNodeMarkFailedParams) (int64, error) {
	return q.q.RolloutNodeMarkFailed(ctx, sqlitesqlc.RolloutNodeMarkFailedParams(arg))
}

func (q queries) RolloutNodePage(ctx context.Context, arg driver.RolloutNodePageParams) ([]driver.RolloutNode, error) {
	rs, err := q.q.RolloutNodePage(ctx, sqlitesqlc.RolloutNodePageParams(arg))
	return driver.Each(rs, err, func(r sqlitesqlc.RolloutNode) driver.RolloutNode { return driver.RolloutNode(r) })
}

func (q queries) RolloutNodeRevert(ctx context.Context, arg driver.RolloutNodeRevertParams) error {
	return q.q.RolloutNodeRevert(ctx, sqlitesqlc.RolloutNodeRevertParams{Now: arg.Now, Reason: arg.Reason, Rollout: arg.Rollout, Nodes: list(arg.Nodes)})
}

func (q queries) RolloutOfNode(ctx context.Context, node string) ([]driver.RolloutOfNodeRow, error) {
	rs, err := q.q.RolloutOfNode(ctx, node)
	return driver.Each(rs, err, func(r sqlitesqlc.RolloutOfNodeRow) driver.RolloutOfNodeRow { return driver.RolloutOfNodeRow(r) })
}

func (q queries) RolloutPause(ctx context.Context, arg driver.RolloutPauseParams) (int64, error) {
	return q.q.RolloutPause(ctx, sqlitesqlc.RolloutPauseParams(arg))
}

func (q queries) RolloutResume(ctx context.Context, arg driver.RolloutResumeParams) (int64, error) {
	return q.q.RolloutResume(ctx, sqlitesqlc.RolloutResumeParams(arg))
}

func (q queries) RolloutSetCounts(ctx context.Context, arg driver.RolloutSetCountsParams) error {
	return q.q.RolloutSetCounts(ctx, sqlitesqlc.RolloutSetCountsParams(arg))
}

func (q queries) RolloutTransitionList(ctx context.Context, arg driver.RolloutTransitionListParams) ([]driver.RolloutTransitionListRow, error) {
	rs, err := q.q.RolloutTransitionList(ctx, sqlitesqlc.RolloutTransitionListParams(arg))
	return driver.Each(rs, err, func(r sqlitesqlc.RolloutTransitionListRow) driver.RolloutTransitionListRow {
		return driver.RolloutTransitionListRow(r)
	})
}

func (q queries) RolloutWaveList(ctx context.Context, rollout int64) ([]driver.RolloutWaveListRow, error) {
	rs, err := q.q.RolloutWaveList(ctx, rollout)
	return driver.Each(rs, err, func(r sqlitesqlc.RolloutWaveListRow) driver.RolloutWaveListRow { return driver.RolloutWaveListRow(r) })
}

func (q queries) SendCountByOutcome(ctx context.Context) ([]driver.SendCountByOutcomeRow, error) {
	rs, err := q.q.SendCountByOutcome(ctx)
	return driver.Each(rs, err, func(r sqlitesqlc.SendCountByOutcomeRow) driver.SendCountByOutcomeRow {
		return driver.SendCountByOutcomeRow(r)
	})
}

func (q queries) SendGet(ctx context.Context, arg driver.SendGetParams) (driver.Send, error) {
	r, err := q.q.SendGet(ctx, sqlitesqlc.SendGetParams(arg))
	return driver.Send(r), err
}

func (q queries) SendInsert(ctx context.Context, arg driver.SendInsertParams) (int64, error) {
	return q.q.SendInsert(ctx, sqlitesqlc.SendInsertParams(arg))
}

func (q queries) SendInsertRefused(ctx context.Context, arg driver.SendInsertRefusedParams) (int64, error) {
	return q.q.SendInsertRefused(ctx, sqlitesqlc.SendInsertRefusedParams(arg))
}

func (q queries) SendListByNode(ctx context.Context, arg driver.SendListByNodeParams) ([]driver.Send, error) {
	rs, err := q.q.SendListByNode(ctx, sqlitesqlc.SendListByNodeParams(arg))
	return driver.Each(rs, err, func(r sqlitesqlc.Send) driver.Send { return driver.Send(r) })
}

func (q queries) SendListRefused(ctx context.Context) ([]driver.Send, error) {
	rs, err := q.q.SendListRefused(ctx)
	return driver.Each(rs, err, func(r sqlitesqlc.Send) driver.Send { return driver.Send(r) })
}

func (q queries) SendListRefusedByNodes(ctx context.Context, nodes []string) ([]driver.Send, error) {
	rs, err := q.q.SendListRefusedByNodes(ctx, list(nodes))
	return driver.Each(rs, err, func(r sqlitesqlc.Send) driver.Send { return driver.Send(r) })
}

func (q queries) SendMarkApplied(ctx context.Context, arg driver.SendMarkAppliedParams) error {
	return q.q.SendMarkApplied(ctx, sqlitesqlc.SendMarkAppliedParams(arg))
}

func (q queries) SendMarkRefused(ctx context.Context, arg driver.SendMarkRefusedParams) (int64, error) {
	return q.q.SendMarkRefused(ctx, sqlitesqlc.SendMarkRefusedParams(arg))
}

func (q queries) SendMarkSuperseded(ctx context.Context, arg driver.SendMarkSupersededParams) error {
	return q.q.SendMarkSuperseded(ctx, sqlitesqlc.SendMarkSupersededParams(arg))
}

func (q queries) SendPrune(ctx context.Context, arg driver.SendPruneParams) (int64, error) {
	return q.q.SendPrune(ctx, sqlitesqlc.SendPruneParams(arg))
}

func (q queries) SendPruneWindowEnd(ctx context.Context, arg driver.SendPruneWindowEndParams) (driver.SendPruneWindowEndRow, error) {
	r, err := q.q.SendPruneWindowEnd(ctx, sqlitesqlc.SendPruneWindowEndParams(arg))
	return driver.SendPruneWindowEndRow(r), err
}

func (q queries) SendRefusedExists(ctx context.Context, arg driver.SendRefusedExistsParams) (bool, error) {
	return q.q.SendRefusedExists(ctx, sqlitesqlc.SendRefusedExistsParams(arg))
}

func (q queries) TransitionListByNode(ctx context.Context, arg driver.TransitionListByNodeParams) ([]driver.Transition, error) {
	rs, err := q.q.TransitionListByNode(ctx, sqlitesqlc.TransitionListByNodeParams(arg))
	return driver.Each(rs, err, func(r sqlitesqlc.Transition) driver.Transition { return driver.Transition(r) })
}

func (q queries) TransitionPrune(ctx context.Context, arg driver.TransitionPruneParams) (int64, error) {
	return q.q.TransitionPrune(ctx, sqlitesqlc.TransitionPruneParams(arg))
}

func (q queries) TransitionPruneWindowEnd(ctx context.Context, arg driver.TransitionPruneWindowEndParams) (driver.TransitionPruneWindowEndRow, error) {
	r, err := q.q.TransitionPruneWindowEnd(ctx, sqlitesqlc.TransitionPruneWindowEndParams(arg))
	return driver.TransitionPruneWindowEndRow(r), err
}

func (q queries) WebSessionDelete(ctx context.Context, idHash string) error {
	return q.q.WebSessionDelete(ctx, idHash)
}

func (q queries) WebSessionDeleteExpired(ctx context.Context, now string) (int64, error) {
	return q.q.WebSessionDeleteExpired(ctx, now)
}

func (q queries) WebSessionInsert(ctx context.Context, arg driver.WebSessionInsertParams) error {
	return q.q.WebSessionInsert(ctx, sqlitesqlc.WebSessionInsertParams(arg))
}

func (q queries) WebSessionGet(ctx context.Context, arg driver.WebSessionGetParams) (driver.WebSessionGetRow, error) {
	r, err := q.q.WebSessionGet(ctx, sqlitesqlc.WebSessionGetParams(arg))
	return driver.WebSessionGetRow(r), err
}

func fromAssignment(r sqlitesqlc.Assignment) driver.Assignment {
	return driver.Assignment{Node: r.Node, Module: r.Module, Taken: r.Taken != 0, AssignedAt: r.AssignedAt, Revision: r.Revision, Source: r.Source, AssignedBy: r.AssignedBy, TakenBy: r.TakenBy}
}

func fromAssignmentDeclarationRow(r sqlitesqlc.AssignmentDeclarationRow) driver.AssignmentDeclarationRow {
	return driver.AssignmentDeclarationRow{Module: r.Module, Taken: r.Taken != 0, Revision: r.Revision}
}

func fromAssignmentListByModuleRow(r sqlitesqlc.AssignmentListByModuleRow) driver.AssignmentListByModuleRow {
	return driver.AssignmentListByModuleRow{Node: r.Node, Taken: r.Taken != 0}
}

func fromAssignmentListByNodeRow(r sqlitesqlc.AssignmentListByNodeRow) driver.AssignmentListByNodeRow {
	return driver.AssignmentListByNodeRow{Module: r.Module, Taken: r.Taken != 0, AssignedAt: r.AssignedAt, Revision: r.Revision, Source: r.Source}
}

func fromAssignmentListByNodesRow(r sqlitesqlc.AssignmentListByNodesRow) driver.AssignmentListByNodesRow {
	return driver.AssignmentListByNodesRow{Node: r.Node, Module: r.Module, Taken: r.Taken != 0, Revision: r.Revision, Source: r.Source,
		AssignedAt: r.AssignedAt, AssignedBy: r.AssignedBy, TakenBy: r.TakenBy}
}

func fromPlacement(r sqlitesqlc.Placement) driver.Placement {
	return driver.Placement{Name: r.Name, Module: r.Module, Selector: r.Selector, Taken: r.Taken != 0, Rollout: r.Rollout, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

func fromResourceState(r sqlitesqlc.ResourceState) driver.ResourceState {
	return driver.ResourceState{Node: r.Node, Module: r.Module, Resource: r.Resource, Kind: r.Kind, SpecDigest: r.SpecDigest, Position: r.Position, GroupName: r.GroupName, State: r.State, Since: r.Since, Attempts: r.Attempts, ConsecutiveFailures: r.ConsecutiveFailures, FailingSince: r.FailingSince, NeverApplied: r.NeverApplied != 0, LastError: r.LastError, HoldReason: r.HoldReason, BlockedBy: r.BlockedBy, RetryRequested: r.RetryRequested != 0, ReportID: r.ReportID, Reason: r.Reason, HeldFound: r.HeldFound, HeldFoundOmitted: r.HeldFoundOmitted}
}

// fromResourceStateListed converts a row of a listing that leaves out what a held file holds.
func fromResourceStateListed(r sqlitesqlc.ResourceStateListByNodeRow) driver.ResourceState {
	return driver.ResourceState{Node: r.Node, Module: r.Module, Resource: r.Resource, Kind: r.Kind, SpecDigest: r.SpecDigest, Position: r.Position, GroupName: r.GroupName, State: r.State, Since: r.Since, Attempts: r.Attempts, ConsecutiveFailures: r.ConsecutiveFailures, FailingSince: r.FailingSince, NeverApplied: r.NeverApplied != 0, LastError: r.LastError, HoldReason: r.HoldReason, BlockedBy: r.BlockedBy, RetryRequested: r.RetryRequested != 0, ReportID: r.ReportID, Reason: r.Reason}
}

func fromResourceStateListStuckRow(r sqlitesqlc.ResourceStateListStuckRow) driver.ResourceStateListStuckRow {
	return driver.ResourceStateListStuckRow{Node: r.Node, Module: r.Module, Resource: r.Resource, NeverApplied: r.NeverApplied != 0}
}

func (q queries) RolloutSetPausedReason(ctx context.Context, arg driver.RolloutPauseParams) error {
	return q.q.RolloutSetPausedReason(ctx, sqlitesqlc.RolloutSetPausedReasonParams(arg))
}
