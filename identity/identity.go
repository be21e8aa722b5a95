// Package identity turns a client's startup user and credentials into an
// Identity: who the user is, and the groups, roles and attributes Ranger
// policies match against.
//
// Static mode (this file and scram.go) keeps users in the config and proves
// them with a SCRAM-SHA-256 exchange, the same mechanism PostgreSQL itself
// uses, so every libpq/JDBC/pgx client logs in unchanged. JWT mode (jwt.go)
// takes an OpenID Connect token as the password.
//
// With both modes (identity.mode = ["jwt", "static"]) the startup user
// decides: a user listed in [[identity.users]] logs in with SCRAM, every
// other user with a token (UsesToken).
package identity

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"github.com/pgranger/pgranger/config"
)

// Identity is an authenticated client. It never holds a credential: for a
// token login only the token's subject, id and expiry are kept.
type Identity struct {
	User       string
	Groups     []string
	Roles      []string
	Attributes map[string]string
	Method     string // MethodSCRAM or MethodJWT

	// Token logins only.
	Subject     string    // the token's "sub"
	TokenID     string    // the token's "jti"
	TokenExpiry time.Time // the token's "exp"
	// SessionDeadline is when the session must end: the token's expiry
	// plus identity.jwt.clock-skew-secs and expiry-grace-secs. Zero for
	// static users, whose sessions have no deadline.
	SessionDeadline time.Time

	// entry is the [[identity.users]] entry a SCRAM login was proven
	// against (nil for a token login): Standing compares it with the
	// entry the configuration holds now, by content.
	entry *staticUser
}

// Authentication methods (Identity.Method).
const (
	MethodSCRAM = "scram-sha-256"
	MethodJWT   = "jwt"
)

// ErrAuthFailed is every authentication failure a client may learn about:
// wrong password and unknown user look the same (as in PostgreSQL).
var ErrAuthFailed = errors.New("password authentication failed")

// Authenticator holds the configured users. Reload swaps them atomically,
// so sessions that are logging in while the config changes see one set.
type Authenticator struct {
	users  atomic.Pointer[map[string]*staticUser]
	mock   mockSalter
	static bool         // identity.mode has "static" (or no mode: tests)
	jwt    *jwtVerifier // identity.mode has "jwt"
}

type staticUser struct {
	id    Identity
	creds scramCredentials
	// password is a digest of the configured password or verifier, to
	// tell a changed password from changed roles at a reload without
	// keeping the secret itself.
	password [sha256.Size]byte
}

// Standing is how an open session's identity compares with the
// configuration after a reload.
type Standing int

const (
	// Current: a token login, or the user's entry is unchanged.
	Current Standing = iota
	// Removed: the user is no longer in [[identity.users]].
	Removed
	// PasswordChanged: the user's password or verifier changed.
	PasswordChanged
	// IdentityChanged: the user's roles, groups or attributes changed.
	IdentityChanged
)

// Standing reports whether id, authenticated earlier, still matches the
// configured users. Sessions whose standing is not Current run with
// access (or a credential) the configuration no longer grants.
func (a *Authenticator) Standing(id *Identity) Standing {
	if id.entry == nil {
		return Current
	}
	cur, ok := a.lookup(id.User)
	switch {
	case !ok:
		return Removed
	case cur.password != id.entry.password:
		return PasswordChanged
	case !sameIdentity(&cur.id, &id.entry.id):
		return IdentityChanged
	}
	return Current
}

// New builds an Authenticator from the identity section. It makes no
// network request: the issuer's keys are fetched by Prime or the first
// token login.
func New(cfg config.Identity) (*Authenticator, error) {
	a := &Authenticator{mock: newMockSalter(), static: len(cfg.Mode) == 0 || cfg.Mode.Has("static")}
	if cfg.Mode.Has("jwt") {
		v, err := newJWTVerifier(cfg.JWT)
		if err != nil {
			return nil, err
		}
		a.jwt = v
	}
	if err := a.Reload(cfg); err != nil {
		return nil, err
	}
	return a, nil
}

// UsesToken reports whether startupUser logs in with a token (a cleartext
// password holding a JWT) rather than SCRAM: in jwt mode everyone does; with
// both modes, everyone not listed in [[identity.users]].
func (a *Authenticator) UsesToken(startupUser string) bool {
	if a.jwt == nil {
		return false
	}
	if a.static {
		if _, listed := a.lookup(startupUser); listed {
			return false
		}
	}
	return true
}

// VerifyToken checks a token sent as the password of startupUser. Errors
// are *AuthError, whose Reason never contains the token.
func (a *Authenticator) VerifyToken(ctx context.Context, startupUser, token string) (*Identity, error) {
	if a.jwt == nil {
		return nil, &AuthError{Kind: TokenInvalid, Reason: "token login is not enabled (identity.mode)"}
	}
	return a.jwt.verify(ctx, startupUser, token)
}

// Prime fetches the issuer's keys (after discovery) so the first token
// login does not wait for them. A failure is worth a warning, not a stop:
// logins fail until the issuer answers, and each later attempt retries.
func (a *Authenticator) Prime(ctx context.Context) error {
	if a.jwt == nil {
		return nil
	}
	return a.jwt.keys.prime(ctx)
}

// Reload replaces the user set. It fails without changing anything when a
// user's password or verifier is unusable. An entry that did not change
// is kept as it was: a plain password is not derived again (4096 rounds
// of PBKDF2 per user and reload).
func (a *Authenticator) Reload(cfg config.Identity) error {
	var prev map[string]*staticUser
	if p := a.users.Load(); p != nil {
		prev = *p
	}
	users := make(map[string]*staticUser, len(cfg.Users))
	for _, u := range cfg.Users {
		attrs := make(map[string]string, len(u.Attributes))
		for k, v := range u.Attributes {
			attrs[k] = v
		}
		next := &staticUser{
			id: Identity{
				User:       u.Name,
				Groups:     sortedCopy(u.Groups),
				Roles:      sortedCopy(u.Roles),
				Attributes: attrs,
				Method:     MethodSCRAM,
			},
			password: sha256.Sum256([]byte(u.Password)),
		}
		if old := prev[u.Name]; old != nil && old.password == next.password && sameIdentity(&old.id, &next.id) {
			users[u.Name] = old
			continue
		}
		creds, err := credentialsFor(u.Password)
		if err != nil {
			return fmt.Errorf("identity.users %q: %w", u.Name, err)
		}
		next.creds = creds
		next.id.entry = next
		users[u.Name] = next
	}
	a.users.Store(&users)
	return nil
}

// sameIdentity compares what policies see of two static identities.
func sameIdentity(a, b *Identity) bool {
	return slices.Equal(a.Groups, b.Groups) && slices.Equal(a.Roles, b.Roles) && maps.Equal(a.Attributes, b.Attributes)
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
