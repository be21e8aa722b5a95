// Package ranger holds Apache Ranger's JSON documents as Go types: the policy
// bundle a plugin downloads (ServicePolicies), tags (ServiceTags), roles
// (RangerRoles) and user/group attributes (RangerUserStore).
//
// The types mirror Ranger's own model classes field for field, so a document
// served by Ranger Admin or written to a plugin's cache file reads the same way
// the Java plugin reads it. Parsing lives in json.go, reading the documents
// from local files in files.go, and the Source interface both policy
// sources implement in source.go: the files of policy.source = "file"
// (ranger/filesource) and Ranger Admin (ranger/rangeradmin). Evaluation is
// the policy package's.
package ranger

// Policy types (RangerPolicy.policyType). A missing policyType means access.
const (
	PolicyTypeAccess    = 0
	PolicyTypeDataMask  = 1
	PolicyTypeRowFilter = 2
	PolicyTypeAudit     = 3
)

// Policy priorities (RangerPolicy.policyPriority).
const (
	PolicyPriorityNormal   = 0
	PolicyPriorityOverride = 1
)

// Mask type names: MASK_NULL, MASK_NONE and CUSTOM Ranger itself
// defines; the others are the hive service-def's dataMaskDef.maskTypes
// (any other name comes from a service-def's dataMaskDef).
const (
	MaskTypeNull         = "MASK_NULL"
	MaskTypeNone         = "MASK_NONE"
	MaskTypeCustom       = "CUSTOM"
	MaskTypeMask         = "MASK"
	MaskTypeShowLast4    = "MASK_SHOW_LAST_4"
	MaskTypeShowFirst4   = "MASK_SHOW_FIRST_4"
	MaskTypeHash         = "MASK_HASH"
	MaskTypeDateShowYear = "MASK_DATE_SHOW_YEAR"
)

// Audit modes (ServicePolicies.auditMode).
const (
	AuditModeDefault = "audit-default"
	AuditModeAll     = "audit-all"
	AuditModeNone    = "audit-none"
)

// ServicePolicies is the policy download for one service
// (plugin/util/ServicePolicies.java).
type ServicePolicies struct {
	ServiceName      string                      `json:"serviceName"`
	ServiceID        int64                       `json:"serviceId"`
	PolicyVersion    int64                       `json:"policyVersion"` // -1 when absent
	PolicyUpdateTime Timestamp                   `json:"policyUpdateTime"`
	Policies         []RangerPolicy              `json:"policies"`
	ServiceDef       *RangerServiceDef           `json:"serviceDef"`
	AuditMode        string                      `json:"auditMode"` // "audit-default" when absent
	TagPolicies      *TagPolicies                `json:"tagPolicies"`
	SecurityZones    map[string]SecurityZoneInfo `json:"securityZones"`
	PolicyDeltas     []RangerPolicyDelta         `json:"policyDeltas"`
	ServiceConfig    StringMap                   `json:"serviceConfig"`
}

// TagPolicies is the bundle of the tag service linked to the service
// (ServicePolicies.TagPolicies).
type TagPolicies struct {
	ServiceName      string            `json:"serviceName"`
	ServiceID        int64             `json:"serviceId"`
	PolicyVersion    int64             `json:"policyVersion"` // -1 when absent
	PolicyUpdateTime Timestamp         `json:"policyUpdateTime"`
	Policies         []RangerPolicy    `json:"policies"`
	ServiceDef       *RangerServiceDef `json:"serviceDef"`
	AuditMode        string            `json:"auditMode"`
	ServiceConfig    StringMap         `json:"serviceConfig"`
}

// SecurityZoneInfo is one zone of ServicePolicies.securityZones.
type SecurityZoneInfo struct {
	ZoneName                     string                `json:"zoneName"`
	Resources                    []map[string][]string `json:"resources"`
	Policies                     []RangerPolicy        `json:"policies"`
	PolicyDeltas                 []RangerPolicyDelta   `json:"policyDeltas"`
	ContainsAssociatedTagService bool                  `json:"containsAssociatedTagService"`
}

// RangerPolicyDelta is one entry of ServicePolicies.policyDeltas; only sent
// to plugins that ask for deltas, which pgranger never does.
type RangerPolicyDelta struct {
	ID              int64         `json:"id"`
	ChangeType      int           `json:"changeType"`
	PoliciesVersion int64         `json:"policiesVersion"`
	Policy          *RangerPolicy `json:"policy"`
}

// RangerPolicy is one policy (plugin/model/RangerPolicy.java plus the
// RangerBaseModelObject fields).
type RangerPolicy struct {
	ID                   int64                             `json:"id"`
	GUID                 string                            `json:"guid"`
	IsEnabled            bool                              `json:"isEnabled"` // true when absent
	Version              int64                             `json:"version"`
	CreatedBy            string                            `json:"createdBy"`
	UpdatedBy            string                            `json:"updatedBy"`
	CreateTime           Timestamp                         `json:"createTime"`
	UpdateTime           Timestamp                         `json:"updateTime"`
	Service              string                            `json:"service"`
	Name                 string                            `json:"name"`
	ServiceType          string                            `json:"serviceType"`
	PolicyType           int                               `json:"policyType"` // null = 0 (access)
	PolicyPriority       int                               `json:"policyPriority"`
	Description          string                            `json:"description"`
	ResourceSignature    string                            `json:"resourceSignature"`
	IsAuditEnabled       bool                              `json:"isAuditEnabled"` // true when absent
	Resources            map[string]RangerPolicyResource   `json:"resources"`
	AdditionalResources  []map[string]RangerPolicyResource `json:"additionalResources"`
	Conditions           []RangerPolicyItemCondition       `json:"conditions"`
	PolicyItems          []RangerPolicyItem                `json:"policyItems"`
	DenyPolicyItems      []RangerPolicyItem                `json:"denyPolicyItems"`
	AllowExceptions      []RangerPolicyItem                `json:"allowExceptions"`
	DenyExceptions       []RangerPolicyItem                `json:"denyExceptions"`
	DataMaskPolicyItems  []RangerDataMaskPolicyItem        `json:"dataMaskPolicyItems"`
	RowFilterPolicyItems []RangerRowFilterPolicyItem       `json:"rowFilterPolicyItems"`
	Options              map[string]any                    `json:"options"`
	ValiditySchedules    []RangerValiditySchedule          `json:"validitySchedules"`
	PolicyLabels         []string                          `json:"policyLabels"`
	ZoneName             string                            `json:"zoneName"`
	IsDenyAllElse        bool                              `json:"isDenyAllElse"`
}

// RangerPolicyResource is the value set of one resource of a policy.
type RangerPolicyResource struct {
	Values      []string `json:"values"`
	IsExcludes  bool     `json:"isExcludes"`
	IsRecursive bool     `json:"isRecursive"`
}

// RangerPolicyItem grants (or denies, or excepts) accesses to users, groups
// and roles.
type RangerPolicyItem struct {
	Accesses      []RangerPolicyItemAccess    `json:"accesses"`
	Users         []string                    `json:"users"`
	Groups        []string                    `json:"groups"`
	Roles         []string                    `json:"roles"`
	Conditions    []RangerPolicyItemCondition `json:"conditions"`
	DelegateAdmin bool                        `json:"delegateAdmin"`
}

// RangerPolicyItemAccess is one access type of an item.
type RangerPolicyItemAccess struct {
	Type      string `json:"type"`
	IsAllowed bool   `json:"isAllowed"` // true when absent
}

// RangerPolicyItemCondition is a condition on an item or on a whole policy.
type RangerPolicyItemCondition struct {
	Type   string   `json:"type"`
	Values []string `json:"values"`
}

// RangerDataMaskPolicyItem is an item of a data-mask policy.
type RangerDataMaskPolicyItem struct {
	RangerPolicyItem
	DataMaskInfo *RangerPolicyItemDataMaskInfo `json:"dataMaskInfo"`
}

// RangerPolicyItemDataMaskInfo says how a matching item masks the column.
type RangerPolicyItemDataMaskInfo struct {
	DataMaskType  string `json:"dataMaskType"`
	ConditionExpr string `json:"conditionExpr"`
	ValueExpr     string `json:"valueExpr"`
}

// RangerRowFilterPolicyItem is an item of a row-filter policy.
type RangerRowFilterPolicyItem struct {
	RangerPolicyItem
	RowFilterInfo *RangerPolicyItemRowFilterInfo `json:"rowFilterInfo"`
}

// RangerPolicyItemRowFilterInfo carries the filter of a matching item.
type RangerPolicyItemRowFilterInfo struct {
	FilterExpr string `json:"filterExpr"`
}

// RangerValiditySchedule limits when a policy (or a tag) applies.
// StartTime and EndTime use the layout "yyyy/MM/dd HH:mm:ss" in TimeZone
// (GMT when blank).
type RangerValiditySchedule struct {
	StartTime   string                     `json:"startTime"`
	EndTime     string                     `json:"endTime"`
	TimeZone    string                     `json:"timeZone"`
	Recurrences []RangerValidityRecurrence `json:"recurrences"`
}

// RangerValidityRecurrence is a cron-like window inside a schedule.
type RangerValidityRecurrence struct {
	Schedule RecurrenceSchedule `json:"schedule"`
	Interval ValidityInterval   `json:"interval"`
}

// RecurrenceSchedule fields are "*", "a,b" or "a-b" lists. Month is 1-12 and
// dayOfWeek is 1-7 with 1 = Sunday, as Ranger's validator and evaluator read them.
type RecurrenceSchedule struct {
	Minute     LenientString `json:"minute"`
	Hour       LenientString `json:"hour"`
	DayOfMonth LenientString `json:"dayOfMonth"`
	DayOfWeek  LenientString `json:"dayOfWeek"`
	Month      LenientString `json:"month"`
	Year       LenientString `json:"year"`
}

// ValidityInterval is how long a recurrence window stays open.
type ValidityInterval struct {
	Days    int `json:"days"`
	Hours   int `json:"hours"`
	Minutes int `json:"minutes"`
}

// RangerServiceDef describes a service type: its resources, access types,
// conditions and mask types (plugin/model/RangerServiceDef.java).
type RangerServiceDef struct {
	ID                int64                      `json:"id"`
	GUID              string                     `json:"guid"`
	IsEnabled         bool                       `json:"isEnabled"` // true when absent
	Name              string                     `json:"name"`
	DisplayName       string                     `json:"displayName"`
	ImplClass         string                     `json:"implClass"`
	Label             string                     `json:"label"`
	Description       string                     `json:"description"`
	RBKeyLabel        string                     `json:"rbKeyLabel"`
	RBKeyDescription  string                     `json:"rbKeyDescription"`
	Version           int64                      `json:"version"`
	CreateTime        Timestamp                  `json:"createTime"`
	UpdateTime        Timestamp                  `json:"updateTime"`
	Options           StringMap                  `json:"options"`
	Configs           []RangerServiceConfigDef   `json:"configs"`
	Resources         []RangerResourceDef        `json:"resources"`
	AccessTypes       []RangerAccessTypeDef      `json:"accessTypes"`
	MarkerAccessTypes []RangerAccessTypeDef      `json:"markerAccessTypes"`
	PolicyConditions  []RangerPolicyConditionDef `json:"policyConditions"`
	ContextEnrichers  []RangerContextEnricherDef `json:"contextEnrichers"`
	Enums             []RangerEnumDef            `json:"enums"`
	DataMaskDef       *RangerDataMaskDef         `json:"dataMaskDef"`
	RowFilterDef      *RangerRowFilterDef        `json:"rowFilterDef"`
}

// RangerServiceConfigDef is a service configuration parameter.
type RangerServiceConfigDef struct {
	ItemID            int64  `json:"itemId"`
	Name              string `json:"name"`
	Type              string `json:"type"`
	SubType           string `json:"subType"`
	Mandatory         bool   `json:"mandatory"`
	DefaultValue      string `json:"defaultValue"`
	ValidationRegEx   string `json:"validationRegEx"`
	ValidationMessage string `json:"validationMessage"`
	UIHint            string `json:"uiHint"`
	Label             string `json:"label"`
	Description       string `json:"description"`
}

// RangerResourceDef is one resource of a service-def. Level orders the
// resources of a hierarchy; Parent links them.
type RangerResourceDef struct {
	ItemID                 int64     `json:"itemId"`
	Name                   string    `json:"name"`
	Type                   string    `json:"type"`
	Level                  int       `json:"level"`
	Parent                 string    `json:"parent"`
	Mandatory              bool      `json:"mandatory"`
	LookupSupported        bool      `json:"lookupSupported"`
	RecursiveSupported     bool      `json:"recursiveSupported"`
	ExcludesSupported      bool      `json:"excludesSupported"`
	Matcher                string    `json:"matcher"`
	MatcherOptions         StringMap `json:"matcherOptions"`
	ValidationRegEx        string    `json:"validationRegEx"`
	ValidationMessage      string    `json:"validationMessage"`
	UIHint                 string    `json:"uiHint"`
	Label                  string    `json:"label"`
	Description            string    `json:"description"`
	AccessTypeRestrictions []string  `json:"accessTypeRestrictions"`
	IsValidLeaf            *bool     `json:"isValidLeaf"`
}

// RangerAccessTypeDef is an access type; ImpliedGrants are the access types
// it also grants (one level, as Ranger expands them).
type RangerAccessTypeDef struct {
	ItemID        int64    `json:"itemId"`
	Name          string   `json:"name"`
	Label         string   `json:"label"`
	RBKeyLabel    string   `json:"rbKeyLabel"`
	ImpliedGrants []string `json:"impliedGrants"`
	Category      string   `json:"category"`
}

// RangerPolicyConditionDef declares a condition type and the Java class
// that evaluates it.
type RangerPolicyConditionDef struct {
	ItemID            int64     `json:"itemId"`
	Name              string    `json:"name"`
	Evaluator         string    `json:"evaluator"`
	EvaluatorOptions  StringMap `json:"evaluatorOptions"`
	ValidationRegEx   string    `json:"validationRegEx"`
	ValidationMessage string    `json:"validationMessage"`
	UIHint            string    `json:"uiHint"`
	Label             string    `json:"label"`
	Description       string    `json:"description"`
}

// RangerContextEnricherDef declares a context enricher (tags, user store...).
type RangerContextEnricherDef struct {
	ItemID          int64     `json:"itemId"`
	Name            string    `json:"name"`
	Enricher        string    `json:"enricher"`
	EnricherOptions StringMap `json:"enricherOptions"`
}

// RangerEnumDef is an enumeration used by configs.
type RangerEnumDef struct {
	ItemID       int64               `json:"itemId"`
	Name         string              `json:"name"`
	Elements     []RangerEnumElement `json:"elements"`
	DefaultIndex int                 `json:"defaultIndex"`
}

// RangerEnumElement is one value of an enumeration.
type RangerEnumElement struct {
	ItemID int64  `json:"itemId"`
	Name   string `json:"name"`
	Label  string `json:"label"`
}

// RangerDataMaskDef lists mask types and the resources and access types
// data-mask policies may use.
type RangerDataMaskDef struct {
	MaskTypes   []RangerDataMaskTypeDef `json:"maskTypes"`
	AccessTypes []RangerAccessTypeDef   `json:"accessTypes"`
	Resources   []RangerResourceDef     `json:"resources"`
}

// RangerDataMaskTypeDef is one mask type; Transformer is the Hive expression
// with {col} (and {colType}) placeholders.
type RangerDataMaskTypeDef struct {
	ItemID          int64     `json:"itemId"`
	Name            string    `json:"name"`
	Label           string    `json:"label"`
	Description     string    `json:"description"`
	Transformer     string    `json:"transformer"`
	DataMaskOptions StringMap `json:"dataMaskOptions"`
	RBKeyLabel      string    `json:"rbKeyLabel"`
}

// RangerRowFilterDef lists the resources and access types row-filter
// policies may use.
type RangerRowFilterDef struct {
	AccessTypes []RangerAccessTypeDef `json:"accessTypes"`
	Resources   []RangerResourceDef   `json:"resources"`
}

// ServiceTags is the tag download for a service (plugin/util/ServiceTags.java).
// Map keys are Ranger's numeric ids, which the JSON writes as strings.
type ServiceTags struct {
	ServiceName      string                  `json:"serviceName"`
	TagVersion       int64                   `json:"tagVersion"`
	TagUpdateTime    Timestamp               `json:"tagUpdateTime"`
	Op               string                  `json:"op"`
	IsDelta          bool                    `json:"isDelta"`
	TagsChangeExtent string                  `json:"tagsChangeExtent"`
	IsTagsDeduped    bool                    `json:"isTagsDeduped"`
	TagDefinitions   map[int64]RangerTagDef  `json:"tagDefinitions"`
	Tags             map[int64]RangerTag     `json:"tags"`
	ServiceResources []RangerServiceResource `json:"serviceResources"`
	ResourceToTagIDs map[int64][]int64       `json:"resourceToTagIds"`
}

// RangerTagDef declares a tag type and its attributes.
type RangerTagDef struct {
	ID            int64                   `json:"id"`
	GUID          string                  `json:"guid"`
	Name          string                  `json:"name"`
	Source        string                  `json:"source"`
	AttributeDefs []RangerTagAttributeDef `json:"attributeDefs"`
}

// RangerTagAttributeDef is one attribute of a tag type.
type RangerTagAttributeDef struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// RangerTag is one tag instance; Type is the tag type name that tag
// policies match ("PII").
type RangerTag struct {
	ID              int64                    `json:"id"`
	GUID            string                   `json:"guid"`
	Type            string                   `json:"type"`
	Owner           int                      `json:"owner"`
	Attributes      StringMap                `json:"attributes"`
	Options         map[string]any           `json:"options"`
	ValidityPeriods []RangerValiditySchedule `json:"validityPeriods"`
}

// RangerServiceResource is a tagged resource, matched against requests with
// the service's resource matchers.
type RangerServiceResource struct {
	ID                int64                           `json:"id"`
	GUID              string                          `json:"guid"`
	ServiceName       string                          `json:"serviceName"`
	ResourceElements  map[string]RangerPolicyResource `json:"resourceElements"`
	OwnerUser         string                          `json:"ownerUser"`
	ResourceSignature string                          `json:"resourceSignature"`
	AdditionalInfo    StringMap                       `json:"additionalInfo"`
}

// RangerRoles is the role download for a service (plugin/util/RangerRoles.java).
type RangerRoles struct {
	ServiceName    string       `json:"serviceName"`
	RoleVersion    int64        `json:"roleVersion"` // -1 when absent
	RoleUpdateTime Timestamp    `json:"roleUpdateTime"`
	RangerRoles    []RangerRole `json:"rangerRoles"`
}

// RangerRole lists the users, groups and roles that are members of a role.
type RangerRole struct {
	ID            int64          `json:"id"`
	GUID          string         `json:"guid"`
	IsEnabled     bool           `json:"isEnabled"` // true when absent
	Version       int64          `json:"version"`
	Name          string         `json:"name"`
	Description   string         `json:"description"`
	Options       map[string]any `json:"options"`
	CreatedByUser string         `json:"createdByUser"`
	Users         []RoleMember   `json:"users"`
	Groups        []RoleMember   `json:"groups"`
	Roles         []RoleMember   `json:"roles"`
}

// RoleMember is a member of a role; IsAdmin only affects role management.
type RoleMember struct {
	Name    string `json:"name"`
	IsAdmin bool   `json:"isAdmin"`
}

// RangerUserStore carries user and group attributes for ${{USER.x}} macros
// (plugin/util/RangerUserStore.java).
type RangerUserStore struct {
	UserStoreVersion    int64                `json:"userStoreVersion"` // -1 when absent
	UserStoreUpdateTime Timestamp            `json:"userStoreUpdateTime"`
	UserAttrMapping     map[string]StringMap `json:"userAttrMapping"`
	GroupAttrMapping    map[string]StringMap `json:"groupAttrMapping"`
	UserGroupMapping    map[string][]string  `json:"userGroupMapping"`
	UserCloudIDMapping  StringMap            `json:"userCloudIdMapping"`
	GroupCloudIDMapping StringMap            `json:"groupCloudIdMapping"`
}
