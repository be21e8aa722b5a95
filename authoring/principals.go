package authoring

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/sqlrewrite"
	"github.com/pgranger/pgranger/sqlstate"
)

// Principal kinds, as Ranger's items and grant requests name them.
const (
	KindUser  = "user"
	KindGroup = "group"
	KindRole  = "role"
)

// Principal is a user, group or role an item names.
type Principal struct {
	Kind, Name string
}

func (p Principal) String() string { return p.Kind + " " + p.Name }

// KnownPrincipal is a user pgranger knows besides Ranger's user store: a
// static user of the configuration ([[identity.users]]), with its groups
// and roles.
type KnownPrincipal struct {
	User          string
	Groups, Roles []string
}

// Directory is who exists, for resolving a grantee written without its
// kind: Ranger's user store (users, their groups, group attributes), its
// roles, the group public, and the configuration's static users. PostgreSQL
// cannot say whether a grantee is a user, a group or a role (GRANT … TO
// GROUP g parses exactly like TO g), so a bare name must name exactly one
// of them.
type Directory struct {
	users, groups, roles map[string]bool
	userGroups           map[string][]string
}

// NewDirectory builds the directory of a bundle plus the static users.
func NewDirectory(b *ranger.Bundle, static []KnownPrincipal) *Directory {
	d := &Directory{users: map[string]bool{}, groups: map[string]bool{"public": true}, roles: map[string]bool{}, userGroups: map[string][]string{}}
	if b != nil && b.UserStore != nil {
		for u, gs := range b.UserStore.UserGroupMapping {
			d.users[u] = true
			d.userGroups[u] = append(d.userGroups[u], gs...)
			for _, g := range gs {
				d.groups[g] = true
			}
		}
		for u := range b.UserStore.UserAttrMapping {
			d.users[u] = true
		}
		for g := range b.UserStore.GroupAttrMapping {
			d.groups[g] = true
		}
	}
	if b != nil && b.Roles != nil {
		for _, r := range b.Roles.RangerRoles {
			d.roles[r.Name] = true
		}
	}
	for _, k := range static {
		d.users[k.User] = true
		d.userGroups[k.User] = append(d.userGroups[k.User], k.Groups...)
		for _, g := range k.Groups {
			d.groups[g] = true
		}
		for _, r := range k.Roles {
			d.roles[r] = true
		}
	}
	return d
}

// GroupsOf is what the directory knows of a user's groups.
func (d *Directory) GroupsOf(user string) []string { return d.userGroups[user] }

// Resolve maps a bare name to the one principal it names: 42704 when it
// names none, 42P09 (naming the candidates) when it names several.
func (d *Directory) Resolve(name string) (Principal, *sqlrewrite.Error) {
	var found []Principal
	if d.users[name] {
		found = append(found, Principal{KindUser, name})
	}
	if d.groups[name] {
		found = append(found, Principal{KindGroup, name})
	}
	if d.roles[name] {
		found = append(found, Principal{KindRole, name})
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return Principal{}, withDetail(errorf(sqlstate.UndefinedObject, "grantee %q is not a user, group or role Ranger knows", name),
			"pgranger looks names up in Ranger's user store and roles and the static users of its configuration.",
			`Write "user:`+name+`", "group:`+name+`" or "role:`+name+`" (a quoted name) to name it anyway.`)
	}
	var kinds, forced []string
	for _, p := range found {
		kinds = append(kinds, p.String())
		forced = append(forced, `"`+p.Kind+":"+name+`"`)
	}
	return Principal{}, withDetail(errorf(sqlstate.AmbiguousAlias, "grantee %q is ambiguous: it is %s", name, strings.Join(kinds, " and ")),
		"", "Write "+strings.Join(forced, " or ")+" to say which.")
}

// principal resolves one name as written: "user:x", "group:x", "role:x"
// force the kind; PUBLIC is the group public; anything else is resolved.
func (d *Directory) principal(name string) (Principal, *sqlrewrite.Error) {
	if kind, rest, ok := strings.Cut(name, ":"); ok {
		switch strings.ToLower(kind) {
		case KindUser, KindGroup, KindRole:
			if rest == "" {
				return Principal{}, errorf(sqlstate.UndefinedObject, "grantee %q names no %s", name, kind)
			}
			return Principal{strings.ToLower(kind), rest}, nil
		}
	}
	if strings.EqualFold(name, "public") {
		return Principal{KindGroup, "public"}, nil
	}
	return d.Resolve(name)
}

// roleSpecs resolves the grantees of a statement (RoleSpec nodes).
// CURRENT_USER and SESSION_USER are the session's user.
func (d *Directory) roleSpecs(nodes []*pg.Node, sessionUser string) ([]Principal, *sqlrewrite.Error) {
	var out []Principal
	for _, n := range nodes {
		rs := n.GetRoleSpec()
		if rs == nil {
			return nil, unsupported("a grantee of this form is not supported")
		}
		var p Principal
		switch rs.Roletype {
		case pg.RoleSpecType_ROLESPEC_PUBLIC:
			p = Principal{KindGroup, "public"}
		case pg.RoleSpecType_ROLESPEC_CURRENT_USER, pg.RoleSpecType_ROLESPEC_SESSION_USER:
			p = Principal{KindUser, sessionUser}
		case pg.RoleSpecType_ROLESPEC_CSTRING:
			var err *sqlrewrite.Error
			if p, err = d.principal(rs.Rolename); err != nil {
				return nil, err
			}
		default:
			return nil, unsupported("CURRENT_ROLE as a grantee is not supported: Ranger has no session role; name the user, group or role")
		}
		out = appendUnique(out, p)
	}
	return out, nil
}

func appendUnique(list []Principal, p Principal) []Principal {
	for _, q := range list {
		if q == p {
			return list
		}
	}
	return append(list, p)
}

// split puts principals into the users, groups and roles of an item.
func split(ps []Principal) (users, groups, roles []string) {
	for _, p := range ps {
		switch p.Kind {
		case KindUser:
			users = append(users, p.Name)
		case KindGroup:
			groups = append(groups, p.Name)
		default:
			roles = append(roles, p.Name)
		}
	}
	return
}
