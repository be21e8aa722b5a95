// Package identity turns a client's startup user and credentials into an
// Identity: who the user is, and the groups, roles and attributes Ranger
// policies match against.
//
// Static mode (this file and scram.go) keeps users in the config and proves
// them with a SCRAM-SHA-256 exchange, the same mechanism PostgreSQL itself
// uses, so every libpq/JDBC/pgx client logs in unchanged.
package identity

import (
	"errors"
	"fmt"
	"sort"
	"sync/atomic"

	"github.com/pgranger/pgranger/config"
)

// Identity is an authenticated client.
type Identity struct {
	User       string
	Groups     []string
	Roles      []string
	Attributes map[string]string
	Method     string // "scram-sha-256"
}

// ErrAuthFailed is every authentication failure a client may learn about:
// wrong password and unknown user look the same (as in PostgreSQL).
var ErrAuthFailed = errors.New("password authentication failed")

// Authenticator holds the configured users. Reload swaps them atomically,
// so sessions that are logging in while the config changes see one set.
type Authenticator struct {
	users atomic.Pointer[map[string]*staticUser]
	mock  mockSalter
}

type staticUser struct {
	id    Identity
	creds scramCredentials
}

// New builds an Authenticator from the identity section.
func New(cfg config.Identity) (*Authenticator, error) {
	a := &Authenticator{mock: newMockSalter()}
	if err := a.Reload(cfg); err != nil {
		return nil, err
	}
	return a, nil
}

// Reload replaces the user set. It fails without changing anything when a
// user's password or verifier is unusable.
func (a *Authenticator) Reload(cfg config.Identity) error {
	users := make(map[string]*staticUser, len(cfg.Users))
	for _, u := range cfg.Users {
		creds, err := credentialsFor(u.Password)
		if err != nil {
			return fmt.Errorf("identity.users %q: %w", u.Name, err)
		}
		attrs := make(map[string]string, len(u.Attributes))
		for k, v := range u.Attributes {
			attrs[k] = v
		}
		users[u.Name] = &staticUser{
			id: Identity{
				User:       u.Name,
				Groups:     sortedCopy(u.Groups),
				Roles:      sortedCopy(u.Roles),
				Attributes: attrs,
				Method:     "scram-sha-256",
			},
			creds: creds,
		}
	}
	a.users.Store(&users)
	return nil
}

func (a *Authenticator) lookup(name string) (*staticUser, bool) {
	u, ok := (*a.users.Load())[name]
	return u, ok
}

func sortedCopy(in []string) []string {
	out := append([]string(nil), in...)
	sort.Strings(out)
	return out
}
