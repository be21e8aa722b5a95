package config

import (
	"reflect"
	"strings"
	"testing"
)

const jwtMinimal = `
[identity]
mode = ["jwt", "static"]

[identity.jwt]
issuer = "https://keycloak.example.com/realms/acme"
audience = "pgranger"
`

func TestJWTConfig(t *testing.T) {
	c, err := Load(write(t, minimal+jwtMinimal+`
roles-claim = ["realm_access.roles", "resource_access.pgranger.roles"]
groups-claim = "groups"
azp-audiences = ["account"]
attribute-claims = { region = "region", dept = 'org."dept.name"' }
`), []string{"PGRANGER_IDENTITY__JWT__CLOCK_SKEW_SECS=5", "PGRANGER_IDENTITY__JWT__ALLOWED_ALGORITHMS=RS256,ES256"})
	if err != nil {
		t.Fatal(err)
	}
	j := c.Identity.JWT
	if !c.Identity.Mode.Has("jwt") || !c.Identity.Mode.Has("static") {
		t.Errorf("mode = %v", c.Identity.Mode)
	}
	if !reflect.DeepEqual(j.RolesClaim, StringList{"realm_access.roles", "resource_access.pgranger.roles"}) ||
		!reflect.DeepEqual(j.GroupsClaim, StringList{"groups"}) || !reflect.DeepEqual(j.AZPAudiences, StringList{"account"}) {
		t.Errorf("claims: %+v", j)
	}
	if j.AttributeClaims["dept"] != `org."dept.name"` || j.UserClaim != "preferred_username" {
		t.Errorf("attribute-claims / user-claim: %+v", j)
	}
	if j.ClockSkewSecs != 5 || !reflect.DeepEqual(j.AllowedAlgorithms, StringList{"RS256", "ES256"}) {
		t.Errorf("env overrides: skew %d algs %v", j.ClockSkewSecs, j.AllowedAlgorithms)
	}
	if j.JWKSMinRefresh != 10 || j.TimeoutSecs != 5 || j.ExpiryGraceSecs != 0 {
		t.Errorf("defaults: %+v", j)
	}
	// jwt alone, configured entirely from the environment.
	c, err = Load(write(t, minimal), []string{"PGRANGER_IDENTITY__MODE=jwt", "PGRANGER_IDENTITY__JWT__ISSUER=http://127.0.0.1:8080/realms/acme",
		"PGRANGER_IDENTITY__JWT__AUDIENCE=pgranger", "PGRANGER_IDENTITY__JWT__ROLES_CLAIM=realm_access.roles,resource_access.pgranger.roles"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Identity.Mode.Has("static") || len(c.Identity.JWT.RolesClaim) != 2 {
		t.Errorf("jwt from env: %+v", c.Identity)
	}
}

func TestJWTConfigErrorsNameTheKey(t *testing.T) {
	cases := []struct{ extra, env, want string }{
		{"", "PGRANGER_IDENTITY__JWT__ISSUER=", "identity.jwt.issuer: must be set"},
		{"", "PGRANGER_IDENTITY__JWT__AUDIENCE=", "identity.jwt.audience: must be set"},
		{"", "PGRANGER_IDENTITY__JWT__ISSUER=http://keycloak.example.com/realms/acme", "identity.jwt.issuer: \"http://keycloak.example.com/realms/acme\": must use https://"},
		{"", "PGRANGER_IDENTITY__JWT__ISSUER=keycloak", "identity.jwt.issuer: \"keycloak\": must be an absolute https:// URL"},
		{"", "PGRANGER_IDENTITY__JWT__ISSUER=ftp://x.example.com/", "identity.jwt.issuer: \"ftp://x.example.com/\": must be an https:// URL"},
		{"", "PGRANGER_IDENTITY__JWT__JWKS_URL=http://10.0.0.1/certs", "identity.jwt.jwks-url:"},
		{"", "PGRANGER_IDENTITY__JWT__ALLOWED_ALGORITHMS=RS256,none", `identity.jwt.allowed-algorithms: "none" is refused`},
		{"", "PGRANGER_IDENTITY__JWT__ALLOWED_ALGORITHMS=HS256", `identity.jwt.allowed-algorithms: "HS256" is refused`},
		{"", "PGRANGER_IDENTITY__JWT__ALLOWED_ALGORITHMS=RS1", `identity.jwt.allowed-algorithms: unknown algorithm "RS1"`},
		{"", "PGRANGER_IDENTITY__JWT__ALLOWED_ALGORITHMS=", "identity.jwt.allowed-algorithms: must name at least one"},
		{"", "PGRANGER_IDENTITY__JWT__USER_CLAIM=", "identity.jwt.user-claim: must be set"},
		{"", "PGRANGER_IDENTITY__JWT__ROLES_CLAIM=realm_access..roles", "identity.jwt.roles-claim: claim path \"realm_access..roles\": empty key"},
		{"", "PGRANGER_IDENTITY__JWT__GROUPS_CLAIM=groups.", "identity.jwt.groups-claim: claim path \"groups.\": ends with '.'"},
		{"attribute-claims = { region = 'a.\"b' }\n", "", "identity.jwt.attribute-claims.region: claim path"},
		{"", "PGRANGER_IDENTITY__JWT__CLOCK_SKEW_SECS=-1", "identity.jwt.clock-skew-secs:"},
		{"", "PGRANGER_IDENTITY__JWT__CLOCK_SKEW_SECS=3600", "identity.jwt.clock-skew-secs:"},
		{"", "PGRANGER_IDENTITY__JWT__EXPIRY_GRACE_SECS=-5", "identity.jwt.expiry-grace-secs:"},
		{"", "PGRANGER_IDENTITY__JWT__JWKS_MIN_REFRESH_SECS=0", "identity.jwt.jwks-min-refresh-secs:"},
		{"", "PGRANGER_IDENTITY__JWT__TIMEOUT_SECS=0", "identity.jwt.timeout-secs:"},
		{"", "PGRANGER_IDENTITY__JWT__AZP_AUDIENCES=,", ""}, // an empty list is fine
		{"", "PGRANGER_IDENTITY__MODE=jwt,jwt", `identity.mode: "jwt" is listed twice`},
		{"", "PGRANGER_IDENTITY__MODE=token", `identity.mode: unknown mode "token"`},
		{"", "PGRANGER_IDENTITY__JWT__ATTRIBUTE_CLAIMS=x", "identity.jwt.attribute-claims: cannot be set from the environment"},
		{"no-such = 1\n", "", "unknown key identity.jwt.no-such"},
		{"roles-claim = 7\n", "", "roles-claim"},
	}
	for _, c := range cases {
		var env []string
		if c.env != "" {
			env = []string{c.env}
		}
		_, err := Load(write(t, minimal+jwtMinimal+c.extra), env)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s%s: unexpected error %v", c.extra, c.env, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s%s: want an error containing %q, got %v", c.extra, c.env, c.want, err)
		}
	}
	// Static-only configs do not validate identity.jwt at all.
	if _, err := Load(write(t, minimal), []string{"PGRANGER_IDENTITY__JWT__CLOCK_SKEW_SECS=-1"}); err != nil {
		t.Errorf("static mode with an unused jwt key: %v", err)
	}
	// Loopback issuers may use plain http (tests, demos).
	if _, err := Load(write(t, minimal+jwtMinimal), []string{"PGRANGER_IDENTITY__JWT__ISSUER=http://localhost:8080/realms/acme"}); err != nil {
		t.Errorf("loopback http issuer: %v", err)
	}
}

func TestParseClaimPath(t *testing.T) {
	ok := map[string][]string{
		"preferred_username":               {"preferred_username"},
		"realm_access.roles":               {"realm_access", "roles"},
		"resource_access.pgranger.roles":   {"resource_access", "pgranger", "roles"},
		`resource_access."my.app".roles`:   {"resource_access", "my.app", "roles"},
		`"https://example.com/claims".org`: {"https://example.com/claims", "org"},
		`a."b"`:                            {"a", "b"},
	}
	for in, want := range ok {
		got, err := ParseClaimPath(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseClaimPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", " ", ".a", "a.", "a..b", `a."b`, `a."b"c`, `a.b"c`, `""`} {
		if got, err := ParseClaimPath(bad); err == nil {
			t.Errorf("ParseClaimPath(%q) = %q, want an error", bad, got)
		}
	}
}
