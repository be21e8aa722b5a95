package config

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// JWT configures token login (identity.mode = "jwt"): the client sends an
// OIDC access or ID token as its password. docs/identity.md explains each key.
type JWT struct {
	// Issuer is the exact "iss" of accepted tokens; discovery reads
	// <issuer>/.well-known/openid-configuration unless JWKSURL is set.
	Issuer  string `toml:"issuer"`
	JWKSURL string `toml:"jwks-url"`
	// Audience must be one of the token's "aud" values, or — when every
	// "aud" value is listed in AZPAudiences — equal its "azp" (Keycloak
	// access tokens carry aud "account" and azp <client>).
	Audience     string     `toml:"audience"`
	AZPAudiences StringList `toml:"azp-audiences"`
	UserClaim    string     `toml:"user-claim"`
	RolesClaim   StringList `toml:"roles-claim"`
	GroupsClaim  StringList `toml:"groups-claim"`
	// AttributeClaims maps a Ranger user attribute (${{USER.x}}) to the
	// claim path it is read from.
	AttributeClaims   map[string]string `toml:"attribute-claims"`
	AllowedAlgorithms StringList        `toml:"allowed-algorithms"`
	ClockSkewSecs     int               `toml:"clock-skew-secs"`
	ExpiryGraceSecs   int               `toml:"expiry-grace-secs"`
	JWKSMinRefresh    int               `toml:"jwks-min-refresh-secs"`
	TimeoutSecs       int               `toml:"timeout-secs"`
	CAFile            string            `toml:"ca-file"`
}

// AsymmetricAlgorithms are the JWS algorithms identity.jwt.allowed-algorithms
// may name: the RSA PKCS#1, RSA-PSS and ECDSA families. HMAC (HS*) would let
// anyone holding the public key sign, and "none" signs nothing.
var AsymmetricAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"}

func defaultJWT() JWT {
	return JWT{
		UserClaim:         "preferred_username",
		RolesClaim:        StringList{"realm_access.roles"},
		GroupsClaim:       StringList{"groups"},
		AllowedAlgorithms: append(StringList(nil), AsymmetricAlgorithms...),
		ClockSkewSecs:     30,
		JWKSMinRefresh:    10,
		TimeoutSecs:       5,
	}
}

// StringList is a list key that also accepts a single string
// (`roles-claim = "realm_access.roles"`).
type StringList []string

// UnmarshalTOML accepts a string or a list of strings.
func (l *StringList) UnmarshalTOML(v any) error {
	switch t := v.(type) {
	case string:
		*l = StringList{t}
	case []any:
		out := make(StringList, 0, len(t))
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("entries must be strings, got %T", e)
			}
			out = append(out, s)
		}
		*l = out
	default:
		return fmt.Errorf("must be a string or a list of strings, got %T", v)
	}
	return nil
}

// ParseClaimPath splits a claim path into the keys of nested JSON objects:
// `realm_access.roles` is ["realm_access", "roles"]. A key holding a dot is
// written in double quotes: `resource_access."my.app".roles`.
func ParseClaimPath(path string) ([]string, error) {
	if strings.TrimSpace(path) == "" {
		return nil, errors.New("empty claim path")
	}
	var out []string
	for i := 0; i <= len(path); {
		var seg string
		if i < len(path) && path[i] == '"' {
			end := strings.IndexByte(path[i+1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("claim path %q: unterminated quote", path)
			}
			seg = path[i+1 : i+1+end]
			i += end + 2
			if i < len(path) && path[i] != '.' {
				return nil, fmt.Errorf("claim path %q: a quoted key must be followed by '.' or the end", path)
			}
		} else {
			end := strings.IndexByte(path[i:], '.')
			if end < 0 {
				end = len(path) - i
			}
			seg = path[i : i+end]
			if strings.ContainsRune(seg, '"') {
				return nil, fmt.Errorf("claim path %q: a quote may only start a key", path)
			}
			i += end
		}
		if seg == "" {
			return nil, fmt.Errorf("claim path %q: empty key", path)
		}
		out = append(out, seg)
		if i >= len(path) {
			break
		}
		i++ // the dot
		if i == len(path) {
			return nil, fmt.Errorf("claim path %q: ends with '.'", path)
		}
	}
	return out, nil
}

func (c *Config) validateIdentity(bad func(key, format string, args ...any)) {
	id := c.Identity
	if len(id.Mode) == 0 {
		bad("identity.mode", "must name at least one mode (static, jwt)")
	}
	seenMode := map[string]bool{}
	for _, m := range id.Mode {
		switch m {
		case "static", "jwt":
		default:
			bad("identity.mode", "unknown mode %q (want static, jwt, or both: [\"jwt\", \"static\"])", m)
		}
		if seenMode[m] {
			bad("identity.mode", "%q is listed twice", m)
		}
		seenMode[m] = true
	}
	seen := map[string]bool{}
	for i, u := range id.Users {
		key := fmt.Sprintf("identity.users[%d]", i)
		switch {
		case u.Name == "":
			bad(key+".name", "must be set")
		case seen[u.Name]:
			bad(key+".name", "duplicate user %q", u.Name)
		}
		seen[u.Name] = true
		if u.Password == "" {
			bad(key+".password", "must be set for user %q", u.Name)
		}
	}
	if id.Mode.Has("static") && len(id.Users) == 0 {
		bad("identity.users", "static mode needs at least one [[identity.users]] entry")
	}
	if id.Mode.Has("jwt") {
		validateJWT(id.JWT, bad)
	}
}

func validateJWT(j JWT, bad func(key, format string, args ...any)) {
	checkURL := func(key, raw string) {
		u, err := url.Parse(raw)
		switch {
		case err != nil:
			bad(key, "%v", err)
		case u.Host == "":
			bad(key, "%q: must be an absolute https:// URL", raw)
		case u.Scheme == "http" && !IsLoopbackHost(u.Hostname()):
			// Keys fetched over plain HTTP can be swapped by anyone on the
			// path, and with them every identity.
			bad(key, "%q: must use https:// (plain http is accepted only for a loopback host)", raw)
		case u.Scheme != "http" && u.Scheme != "https":
			bad(key, "%q: must be an https:// URL", raw)
		case u.User != nil:
			bad(key, "%q: must not carry credentials", u.Redacted())
		}
	}
	if j.Issuer == "" {
		bad("identity.jwt.issuer", `must be set when identity.mode has "jwt" (the exact "iss" of accepted tokens, e.g. https://keycloak.example.com/realms/acme)`)
	} else {
		checkURL("identity.jwt.issuer", j.Issuer)
	}
	if j.JWKSURL != "" {
		checkURL("identity.jwt.jwks-url", j.JWKSURL)
	}
	if j.Audience == "" {
		bad("identity.jwt.audience", `must be set when identity.mode has "jwt" (the client id tokens are issued for)`)
	}
	for _, a := range j.AZPAudiences {
		if a == "" {
			bad("identity.jwt.azp-audiences", "entries must not be empty")
		}
	}
	path := func(key, p string) {
		if _, err := ParseClaimPath(p); err != nil {
			bad(key, "%v", err)
		}
	}
	if j.UserClaim == "" {
		bad("identity.jwt.user-claim", "must be set (e.g. preferred_username)")
	} else {
		path("identity.jwt.user-claim", j.UserClaim)
	}
	for _, p := range j.RolesClaim {
		path("identity.jwt.roles-claim", p)
	}
	for _, p := range j.GroupsClaim {
		path("identity.jwt.groups-claim", p)
	}
	names := make([]string, 0, len(j.AttributeClaims))
	for k := range j.AttributeClaims {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		key := "identity.jwt.attribute-claims." + k
		if strings.TrimSpace(k) == "" {
			bad("identity.jwt.attribute-claims", "attribute names must not be empty")
			continue
		}
		path(key, j.AttributeClaims[k])
	}
	if len(j.AllowedAlgorithms) == 0 {
		bad("identity.jwt.allowed-algorithms", "must name at least one algorithm (%s)", strings.Join(AsymmetricAlgorithms, ", "))
	}
	for _, a := range j.AllowedAlgorithms {
		switch {
		case strings.EqualFold(a, "none"):
			bad("identity.jwt.allowed-algorithms", `"none" is refused: unsigned tokens prove nothing`)
		case strings.HasPrefix(strings.ToUpper(a), "HS"):
			bad("identity.jwt.allowed-algorithms", "%q is refused: HMAC tokens are verified with a shared secret, and against a public key anyone could sign them", a)
		default:
			ok := false
			for _, x := range AsymmetricAlgorithms {
				ok = ok || x == a
			}
			if !ok {
				bad("identity.jwt.allowed-algorithms", "unknown algorithm %q (want some of %s)", a, strings.Join(AsymmetricAlgorithms, ", "))
			}
		}
	}
	if j.ClockSkewSecs < 0 || j.ClockSkewSecs > 300 {
		bad("identity.jwt.clock-skew-secs", "must be between 0 and 300, got %d", j.ClockSkewSecs)
	}
	if j.ExpiryGraceSecs < 0 {
		bad("identity.jwt.expiry-grace-secs", "must be 0 or positive, got %d", j.ExpiryGraceSecs)
	}
	if j.JWKSMinRefresh <= 0 {
		bad("identity.jwt.jwks-min-refresh-secs", "must be greater than 0, got %d", j.JWKSMinRefresh)
	}
	if j.TimeoutSecs <= 0 {
		bad("identity.jwt.timeout-secs", "must be greater than 0, got %d", j.TimeoutSecs)
	}
}
