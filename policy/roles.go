package policy

import (
	"sort"

	"github.com/pgranger/pgranger/ranger"
)

// roleStore resolves RangerRoles membership the way RangerRolesUtil does:
// a role that lists role S also has every member of S, transitively. A
// role's isEnabled flag is not consulted, as in Ranger.
type roleStore struct {
	userRoles  map[string][]string // user -> roles containing it
	groupRoles map[string][]string // group -> roles containing it
	roleRoles  map[string][]string // role -> roles containing it (for roles asserted by the identity provider)
}

func newRoleStore(rr *ranger.RangerRoles) *roleStore {
	rs := &roleStore{userRoles: map[string][]string{}, groupRoles: map[string][]string{}, roleRoles: map[string][]string{}}
	if rr == nil {
		return rs
	}
	byName := map[string]*ranger.RangerRole{}
	for i := range rr.RangerRoles {
		r := &rr.RangerRoles[i]
		if _, dup := byName[r.Name]; !dup {
			byName[r.Name] = r
		}
	}
	for i := range rr.RangerRoles {
		role := &rr.RangerRoles[i]
		if role.Name == "" {
			continue
		}
		contained := map[string]*ranger.RangerRole{role.Name: role}
		var walk func(r *ranger.RangerRole)
		walk = func(r *ranger.RangerRole) {
			for _, m := range r.Roles {
				if c := byName[m.Name]; c != nil && contained[m.Name] == nil {
					contained[m.Name] = c
					walk(c)
				}
			}
		}
		walk(role)
		for _, c := range contained {
			for _, m := range c.Users {
				addRole(rs.userRoles, m.Name, role.Name)
			}
			for _, m := range c.Groups {
				addRole(rs.groupRoles, m.Name, role.Name)
			}
			for _, m := range c.Roles {
				addRole(rs.roleRoles, m.Name, role.Name)
			}
		}
	}
	return rs
}

func addRole(m map[string][]string, member, role string) {
	if member == "" {
		return
	}
	for _, r := range m[member] {
		if r == role {
			return
		}
	}
	m[member] = append(m[member], role)
}

func (rs *roleStore) rolesOf(s *Subject) []string {
	if len(s.Roles) == 0 && len(rs.userRoles) == 0 && len(rs.groupRoles) == 0 {
		return nil
	}
	set := map[string]bool{}
	for _, r := range s.Roles {
		if r == "" {
			continue
		}
		set[r] = true
		for _, c := range rs.roleRoles[r] {
			set[c] = true
		}
	}
	if s.User != "" {
		for _, r := range rs.userRoles[s.User] {
			set[r] = true
		}
	}
	for _, g := range s.Groups {
		for _, r := range rs.groupRoles[g] {
			set[r] = true
		}
	}
	for _, r := range rs.groupRoles["public"] {
		set[r] = true
	}
	if len(set) == 0 {
		return nil
	}
	out := make([]string, 0, len(set))
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}
