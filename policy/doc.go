// Package policy evaluates an Apache Ranger bundle (policies, tag policies,
// tags, roles, user store) for one identity and resource: access decisions,
// column masks and row filters. It does no I/O and knows nothing of SQL.
//
// The semantics are Ranger's (RangerPolicyEngineImpl and the evaluators it
// builds), ported rule by rule and checked against Ranger's own engine test
// files (see policytest). Where pgranger differs, it does so on purpose and
// the difference is written down here:
//
//   - Conditions pgranger cannot evaluate fail closed instead of being
//     ignored (conditions.go). Resource values holding ${{expressions}}
//     other than ${{USER.attr}} are treated the same way: such a policy can
//     deny but not allow, mask or filter.
//   - Mask and row-filter policies of equal priority are taken in policy
//     name order (Ranger's order there is not fully defined). Tag masks come
//     before resource masks of the same priority unless
//     Options.MaskPrecedence is "resource". Tag row filters are ANDed with
//     the resource row filter instead of replacing it.
//   - A tag mask whose type names another component ("hbase:...") is not
//     dropped but returned as Unmappable, so the caller can restrict the
//     column.
//   - Values ${{...}} in masks and filters are returned verbatim; the SQL
//     layer expands them with proper quoting. For that it learns the
//     resource's tags from TagsOf, and the current tag (Ranger's TAG) of a
//     tag policy's result from Mask.CurrentTag and RowFilter.Tags.
//   - Validity-schedule recurrences are read in the schedule's time zone
//     (Ranger uses the plugin JVM's).
//
// Tags come with the bundle, or from the ServiceTags file a tag
// service-def's RangerTagEnricher with RangerFileBasedTagRetriever names
// (Options.ReadTagFile, enricher.go). Whether an access is audited follows
// the audit mode, the policies' isAuditEnabled, serviceConfig's audit
// exclusions and audit filters (auditfilter.go, audit.go). Who may access a
// resource is ResourceAccessInfo (accessinfo.go).
//
// Super users and groups come from serviceConfig
// ranger.plugin.super.users|groups; they bypass policies, masks and row
// filters.
package policy
