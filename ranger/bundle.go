package ranger

// Bundle is one consistent set of Ranger documents for a service.
type Bundle struct {
	Policies  *ServicePolicies // never nil in a usable bundle
	Tags      *ServiceTags     // nil when no tag source
	Roles     *RangerRoles     // nil when no roles source
	UserStore *RangerUserStore // nil when none
}

// Versions are the versions of a bundle's documents, named as Ranger
// Admin's download paths name them; -1 for a document the bundle lacks.
type Versions struct {
	Policies  int64 `json:"policies"`
	Tags      int64 `json:"tags"`
	Roles     int64 `json:"roles"`
	UserStore int64 `json:"userstore"`
}

// NoVersions is the Versions of an empty bundle.
func NoVersions() Versions { return Versions{-1, -1, -1, -1} }

// Versions returns the versions of b's documents.
func (b *Bundle) Versions() Versions {
	v := NoVersions()
	if b == nil {
		return v
	}
	if b.Policies != nil {
		v.Policies = b.Policies.PolicyVersion
	}
	if b.Tags != nil {
		v.Tags = b.Tags.TagVersion
	}
	if b.Roles != nil {
		v.Roles = b.Roles.RoleVersion
	}
	if b.UserStore != nil {
		v.UserStore = b.UserStore.UserStoreVersion
	}
	return v
}
