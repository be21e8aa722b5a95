package ranger

import (
	"fmt"
	"os"
)

// FilePaths name the local documents of policy.source = "file". Only
// Policies is required.
type FilePaths struct {
	Policies  string // ServicePolicies JSON, as Ranger Admin serves it
	Tags      string // ServiceTags JSON
	Roles     string // RangerRoles JSON
	UserStore string // RangerUserStore JSON
}

// LoadFiles reads and parses the files of paths as one bundle: every
// document parses, or none is returned. The policy source of those files,
// which notices when they change, is ranger/filesource; `pgranger check`,
// `masks` and `test` read them once through this.
func LoadFiles(paths FilePaths) (*Bundle, error) {
	data, err := os.ReadFile(paths.Policies)
	if err != nil {
		return nil, err
	}
	b := &Bundle{}
	if b.Policies, err = ParseServicePolicies(data); err != nil {
		return nil, fmt.Errorf("%s: %w", paths.Policies, err)
	}
	if paths.Tags != "" {
		data, err := os.ReadFile(paths.Tags)
		if err != nil {
			return nil, err
		}
		if b.Tags, err = ParseServiceTags(data); err != nil {
			return nil, fmt.Errorf("%s: %w", paths.Tags, err)
		}
	}
	if paths.Roles != "" {
		data, err := os.ReadFile(paths.Roles)
		if err != nil {
			return nil, err
		}
		if b.Roles, err = ParseRoles(data); err != nil {
			return nil, fmt.Errorf("%s: %w", paths.Roles, err)
		}
	}
	if paths.UserStore != "" {
		data, err := os.ReadFile(paths.UserStore)
		if err != nil {
			return nil, err
		}
		if b.UserStore, err = ParseUserStore(data); err != nil {
			return nil, fmt.Errorf("%s: %w", paths.UserStore, err)
		}
	}
	return b, nil
}
