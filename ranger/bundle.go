package ranger

// Bundle is one consistent set of Ranger documents for a service.
type Bundle struct {
	Policies  *ServicePolicies // never nil in a usable bundle
	Tags      *ServiceTags     // nil when no tag source
	Roles     *RangerRoles     // nil when no roles source
	UserStore *RangerUserStore // nil when none
}
