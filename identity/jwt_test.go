package identity

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/pgranger/pgranger/config"
	"github.com/pgranger/pgranger/internal/testidp"
)

// jwtConfig is identity.jwt for iss, Keycloak style: realm and client
// roles, groups, and a region attribute.
func jwtConfig(iss *testidp.Issuer) config.JWT {
	c := config.Default().Identity.JWT
	c.Issuer = iss.URL
	c.Audience = "pgranger"
	c.RolesClaim = config.StringList{"realm_access.roles", "resource_access.pgranger.roles"}
	c.AttributeClaims = map[string]string{"region": "region", "dept": "org.dept"}
	return c
}

type fixture struct {
	iss   *testidp.Issuer
	key   *testidp.Key
	v     *jwtVerifier
	clock *fakeClock
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newFixture(t *testing.T, edit func(*config.JWT)) *fixture {
	t.Helper()
	key := testidp.NewRSAKey(t, "k1", jose.RS256)
	iss := testidp.New(t, "acme", false, key)
	cfg := jwtConfig(iss)
	if edit != nil {
		edit(&cfg)
	}
	v, err := newJWTVerifier(cfg)
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Now()}
	v.now = clock.now
	return &fixture{iss: iss, key: key, v: v, clock: clock}
}

func (f *fixture) token(t *testing.T, tk testidp.Token) string {
	t.Helper()
	return testidp.Sign(t, f.key, f.iss.Claims(tk))
}

func (f *fixture) verify(t *testing.T, user, token string) (*Identity, *AuthError) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id, err := f.v.verify(ctx, user, token)
	if err == nil {
		return id, nil
	}
	var ae *AuthError
	if !errors.As(err, &ae) {
		t.Fatalf("error is not an *AuthError: %T %v", err, err)
	}
	// A reason names what is wrong and never repeats the token or a part of it.
	for _, part := range append(strings.Split(token, "."), token) {
		if len(part) >= 8 && strings.Contains(ae.Reason, part) {
			t.Errorf("reason %q echoes the token", ae.Reason)
		}
	}
	return nil, ae
}

func TestJWTKeycloakToken(t *testing.T) {
	f := newFixture(t, nil)
	claims := f.iss.Claims(testidp.Token{User: "dave", RealmRoles: []string{"analyst"}, ClientRoles: []string{"auditor", "analyst"},
		Groups: []string{"analysts", "emea"}, Extra: map[string]any{"region": "US", "org": map[string]any{"dept": 42}}})
	tok := testidp.Sign(t, f.key, claims)
	id, ae := f.verify(t, "dave", tok)
	if ae != nil {
		t.Fatalf("valid token refused: %v", ae)
	}
	wantRoles := []string{"analyst", "auditor", "default-roles-acme", "offline_access", "uma_authorization"}
	if id.User != "dave" || !reflect.DeepEqual(id.Roles, wantRoles) || !reflect.DeepEqual(id.Groups, []string{"analysts", "emea"}) {
		t.Errorf("identity = %+v", id)
	}
	if !reflect.DeepEqual(id.Attributes, map[string]string{"region": "US", "dept": "42"}) {
		t.Errorf("attributes = %v", id.Attributes)
	}
	exp := time.Unix(claims["exp"].(int64), 0)
	if id.Method != MethodJWT || id.Subject != claims["sub"] || id.TokenID != claims["jti"] || !id.TokenExpiry.Equal(exp) {
		t.Errorf("token facts: method %q sub %q jti %q exp %v", id.Method, id.Subject, id.TokenID, id.TokenExpiry)
	}
	if want := exp.Add(30 * time.Second); !id.SessionDeadline.Equal(want) {
		t.Errorf("session deadline = %v, want exp + clock skew = %v", id.SessionDeadline, want)
	}
	// ES256 and PS256 keys work the same way.
	ec, ps := testidp.NewECKey(t, "ec1"), testidp.NewRSAKey(t, "ps1", jose.PS256)
	f.iss.Publish(f.key, ec, ps)
	f.clock.advance(11 * time.Second) // past jwks-min-refresh-secs
	for _, k := range []*testidp.Key{ec, ps} {
		if _, ae := f.verify(t, "dave", testidp.Sign(t, k, claims)); ae != nil {
			t.Errorf("%s token refused: %v", k.Alg, ae)
		}
	}
}

func TestJWTRefusals(t *testing.T) {
	f := newFixture(t, func(c *config.JWT) { c.ExpiryGraceSecs = 60 })
	other := testidp.NewRSAKey(t, "k1", jose.RS256) // same kid, different key
	base := testidp.Token{User: "dave", RealmRoles: []string{"analyst"}}
	claims := func(extra map[string]any) map[string]any {
		tk := base
		tk.Extra = extra
		return f.iss.Claims(tk)
	}
	// Times are relative to the verifier's clock, which newFixture froze
	// before the keys above were generated (seconds on a busy machine), and
	// the expired token is far outside the 30 s skew, so no margin depends
	// on how long the set-up took.
	now := f.clock.now()
	cases := []struct {
		name, user, token string
		kind              AuthErrorKind
		reason            string
	}{
		{"expired", "dave", testidp.Sign(t, f.key, claims(map[string]any{"exp": now.Add(-time.Hour).Unix()})), TokenInvalid, "the token expired at"},
		{"expired just outside the skew", "dave", testidp.Sign(t, f.key, claims(map[string]any{"exp": now.Add(-32 * time.Second).Unix()})), TokenInvalid, "the token expired at"},
		{"no exp", "dave", testidp.Sign(t, f.key, claims(map[string]any{"exp": nil})), TokenInvalid, `no "exp" claim`},
		{"exp not a number", "dave", testidp.Sign(t, f.key, claims(map[string]any{"exp": "tomorrow"})), TokenInvalid, "could not be verified"},
		{"not yet valid", "dave", testidp.Sign(t, f.key, claims(map[string]any{"nbf": now.Add(time.Hour).Unix()})), TokenInvalid, "not valid before"},
		{"issued in the future", "dave", testidp.Sign(t, f.key, claims(map[string]any{"iat": now.Add(time.Hour).Unix()})), TokenInvalid, "issued in the future"},
		{"wrong issuer", "dave", testidp.Sign(t, f.key, claims(map[string]any{"iss": "https://evil.example.com/realms/acme"})), TokenInvalid, "issuer is not identity.jwt.issuer"},
		{"no issuer", "dave", testidp.Sign(t, f.key, claims(map[string]any{"iss": nil})), TokenInvalid, "issuer is not identity.jwt.issuer"},
		{"wrong audience", "dave", testidp.Sign(t, f.key, claims(map[string]any{"aud": []string{"other-app"}, "azp": "other-app"})), TokenInvalid, "audience"},
		{"aud account without azp-audiences", "dave", testidp.Sign(t, f.key, claims(map[string]any{"aud": "account"})), TokenInvalid, "audience"},
		{"bad signature", "dave", testidp.Sign(t, other, claims(nil)), TokenInvalid, "signature does not verify"},
		{"alg none", "dave", testidp.Unsigned(t, "k1", claims(nil)), TokenInvalid, `unsigned (alg "none")`},
		{"HS256 keyed with the public key", "dave", testidp.HS256(t, "k1", f.key.PublicPEM(), claims(nil)), TokenInvalid, "HMAC"},
		{"unknown kid", "dave", testidp.SignWithKID(t, other, "k9", claims(nil)), TokenInvalid, `signing key "k9" is not in the issuer's key set`},
		{"crit header", "dave", testidp.WithHeader(t, f.key, map[string]any{"crit": []string{"exp"}, "exp": 1}, claims(nil)), TokenInvalid, "crit"},
		{"user mismatch", "erin", testidp.Sign(t, f.key, claims(nil)), TokenUserMismatch, `the token is for user "dave", not the startup user "erin"`},
		{"no user claim", "dave", testidp.Sign(t, f.key, claims(map[string]any{"preferred_username": nil})), TokenInvalid, `no "preferred_username" claim`},
		{"user claim not a string", "dave", testidp.Sign(t, f.key, claims(map[string]any{"preferred_username": 7})), TokenInvalid, `no "preferred_username" claim`},
		{"roles not a list", "dave", testidp.Sign(t, f.key, claims(map[string]any{"realm_access": map[string]any{"roles": map[string]any{"a": 1}}})), TokenInvalid, `"realm_access.roles" claim is a object`},
		{"role not a string", "dave", testidp.Sign(t, f.key, claims(map[string]any{"realm_access": map[string]any{"roles": []any{"a", 1}}})), TokenInvalid, `"realm_access.roles" claim holds a number`},
		{"attribute with two values", "dave", testidp.Sign(t, f.key, claims(map[string]any{"region": []string{"US", "EU"}})), TokenInvalid, `"region" claim is a list of 2 values`},
		{"attribute an object", "dave", testidp.Sign(t, f.key, claims(map[string]any{"region": map[string]any{}})), TokenInvalid, `"region" claim is a object`},
		{"empty password", "dave", "", TokenInvalid, "no token"},
		{"not a JWT", "dave", "correct horse battery staple", TokenInvalid, "not a JWT"},
		{"JWE", "dave", "a.b.c.d.e", TokenInvalid, "encrypted tokens"},
		{"garbage header", "dave", "!!!.e30.AAAA", TokenInvalid, "header is not base64url"},
		{"garbage payload", "dave", strings.Split(testidp.Sign(t, f.key, claims(nil)), ".")[0] + ".!!!.AAAA", TokenInvalid, "payload is not base64url"},
		{"too long", "dave", strings.Repeat("a", maxTokenBytes+1), TokenInvalid, "longer than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, ae := f.verify(t, c.user, c.token)
			if ae == nil {
				t.Fatal("accepted")
			}
			if ae.Kind != c.kind || !strings.Contains(ae.Reason, c.reason) {
				t.Errorf("kind %d reason %q, want kind %d with %q", ae.Kind, ae.Reason, c.kind, c.reason)
			}
		})
	}
}

func TestJWTClockSkew(t *testing.T) {
	f := newFixture(t, func(c *config.JWT) { c.ClockSkewSecs = 30 })
	now := f.clock.now() // the verifier's (frozen) clock, not the wall clock
	for name, extra := range map[string]map[string]any{
		"expired 10 s ago":       {"exp": now.Add(-10 * time.Second).Unix()},
		"nbf in 10 s":            {"nbf": now.Add(10 * time.Second).Unix()},
		"issued 10 s from now":   {"iat": now.Add(10 * time.Second).Unix()},
		"no nbf, no iat (valid)": {"iat": nil},
	} {
		tok := f.token(t, testidp.Token{User: "dave", Extra: extra})
		if _, ae := f.verify(t, "dave", tok); ae != nil {
			t.Errorf("%s: within the 30 s skew, refused: %v", name, ae)
		}
	}
}

func TestJWTAudienceAndAZP(t *testing.T) {
	f := newFixture(t, func(c *config.JWT) { c.AZPAudiences = config.StringList{"account"} })
	for _, c := range []struct {
		name string
		aud  any
		azp  any
		ok   bool
	}{
		{"aud holds the audience", []string{"pgranger", "account"}, "other", true},
		{"aud is a string", "pgranger", nil, true},
		{"aud account, azp pgranger", "account", "pgranger", true},
		{"aud missing, azp pgranger", nil, "pgranger", true},
		{"aud account, azp another client", "account", "other", false},
		{"aud account and another, azp pgranger", []string{"account", "other"}, "pgranger", false},
		{"aud account, no azp", "account", nil, false},
	} {
		tok := f.token(t, testidp.Token{User: "dave", Extra: map[string]any{"aud": c.aud, "azp": c.azp}})
		_, ae := f.verify(t, "dave", tok)
		if (ae == nil) != c.ok {
			t.Errorf("%s: accepted = %v, want %v (%v)", c.name, ae == nil, c.ok, ae)
		}
	}
}

func TestJWTAlgorithmAllowList(t *testing.T) {
	f := newFixture(t, func(c *config.JWT) { c.AllowedAlgorithms = config.StringList{"ES256"} })
	_, ae := f.verify(t, "dave", f.token(t, testidp.Token{User: "dave"}))
	if ae == nil || !strings.Contains(ae.Reason, `algorithm "RS256" is not in identity.jwt.allowed-algorithms`) {
		t.Errorf("RS256 with only ES256 allowed: %v", ae)
	}
	for _, bad := range []string{"none", "HS256", "EdDSA"} {
		cfg := jwtConfig(f.iss)
		cfg.AllowedAlgorithms = config.StringList{bad}
		if _, err := newJWTVerifier(cfg); err == nil {
			t.Errorf("allowed-algorithms %q must be refused", bad)
		}
	}
}

// A key the token does not name is fetched once; made-up kids do not make
// pgranger fetch the JWKS more than once per jwks-min-refresh-secs.
func TestJWTKeyRotationAndRateLimit(t *testing.T) {
	f := newFixture(t, func(c *config.JWT) { c.JWKSMinRefresh = 60 })
	if _, ae := f.verify(t, "dave", f.token(t, testidp.Token{User: "dave"})); ae != nil {
		t.Fatal(ae)
	}
	if n := f.iss.JWKSHits.Load(); n != 1 {
		t.Fatalf("JWKS fetched %d times for the first login, want 1", n)
	}
	forger := testidp.NewRSAKey(t, "x", jose.RS256)
	for i := 0; i < 20; i++ {
		tok := testidp.SignWithKID(t, forger, "made-up-"+string(rune('a'+i)), f.iss.Claims(testidp.Token{User: "dave"}))
		if _, ae := f.verify(t, "dave", tok); ae == nil || !strings.Contains(ae.Reason, "is not in the issuer's key set") {
			t.Fatalf("made-up kid: %v", ae)
		}
	}
	if n := f.iss.JWKSHits.Load(); n != 1 {
		t.Errorf("JWKS fetched %d times within jwks-min-refresh-secs, want 1", n)
	}
	// The issuer rotates to k2. Within the window the new kid is unknown…
	k2 := testidp.NewRSAKey(t, "k2", jose.RS256)
	f.iss.Publish(f.key, k2)
	tok2 := testidp.Sign(t, k2, f.iss.Claims(testidp.Token{User: "dave"}))
	if _, ae := f.verify(t, "dave", tok2); ae == nil {
		t.Fatal("a kid fetched within the window must not be known yet")
	}
	// …after it, one fetch finds it.
	f.clock.advance(61 * time.Second)
	if _, ae := f.verify(t, "dave", tok2); ae != nil {
		t.Fatalf("rotated key: %v", ae)
	}
	if n := f.iss.JWKSHits.Load(); n != 2 {
		t.Errorf("JWKS fetched %d times, want 2", n)
	}
	// A withdrawn key stops working once the keys are older than jwksMaxAge.
	f.iss.Publish(k2)
	f.clock.advance(jwksMaxAge + time.Second)
	if _, ae := f.verify(t, "dave", f.token(t, testidp.Token{User: "dave"})); ae == nil || !strings.Contains(ae.Reason, `"k1" is not in the issuer's key set`) {
		t.Errorf("withdrawn key: %v", ae)
	}
}

func TestJWTIssuerUnavailable(t *testing.T) {
	f := newFixture(t, func(c *config.JWT) { c.JWKSMinRefresh = 60 })
	f.iss.Down.Store(true)
	tok := f.token(t, testidp.Token{User: "dave"})
	_, ae := f.verify(t, "dave", tok)
	if ae == nil || ae.Kind != TokenUnverifiable || !strings.Contains(ae.Reason, "signing keys could not be fetched") {
		t.Fatalf("issuer down: %v", ae)
	}
	hits := f.iss.DiscoveryHits.Load()
	for i := 0; i < 5; i++ {
		f.verify(t, "dave", tok)
	}
	if n := f.iss.DiscoveryHits.Load(); n != hits {
		t.Errorf("a down issuer was asked %d more times within the refresh window", n-hits)
	}
	// Back up, after the window: logins work again.
	f.iss.Down.Store(false)
	f.clock.advance(61 * time.Second)
	if _, ae := f.verify(t, "dave", f.token(t, testidp.Token{User: "dave"})); ae != nil {
		t.Errorf("issuer back: %v", ae)
	}
}

func TestJWTDiscoveryRules(t *testing.T) {
	// Explicit jwks-url: no discovery at all.
	f := newFixture(t, nil)
	cfg := jwtConfig(f.iss)
	cfg.JWKSURL = f.iss.JWKSURL()
	v, err := newJWTVerifier(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.verify(context.Background(), "dave", f.token(t, testidp.Token{User: "dave"})); err != nil {
		t.Fatalf("jwks-url: %v", err)
	}
	if n := f.iss.DiscoveryHits.Load(); n != 0 {
		t.Errorf("discovery was asked %d times although jwks-url is set", n)
	}

	// A discovery document that names another issuer is not trusted.
	f2 := newFixture(t, nil)
	f2.iss.DiscoveryIssuer = "https://evil.example.com/realms/acme"
	_, ae := f2.verify(t, "dave", f2.token(t, testidp.Token{User: "dave"}))
	if ae == nil || ae.Kind != TokenUnverifiable || !strings.Contains(ae.Reason, "discovery") {
		t.Errorf("discovery issuer mismatch: %v", ae)
	}

	// Nor one that sends pgranger to plain http off the loopback.
	f3 := newFixture(t, nil)
	f3.iss.JWKSURIOverride = "http://keys.example.com/certs"
	_, ae = f3.verify(t, "dave", f3.token(t, testidp.Token{User: "dave"}))
	if ae == nil || ae.Kind != TokenUnverifiable || !strings.Contains(ae.Reason, "not an https:// URL") {
		t.Errorf("http jwks_uri: %v", ae)
	}
}

func TestJWTOverTLSWithCAFile(t *testing.T) {
	key := testidp.NewRSAKey(t, "k1", jose.RS256)
	iss := testidp.New(t, "acme", true, key)
	tok := testidp.Sign(t, key, iss.Claims(testidp.Token{User: "dave"}))

	cfg := jwtConfig(iss)
	v, err := newJWTVerifier(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = func() error { _, err := v.verify(context.Background(), "dave", tok); return err }()
	var ae *AuthError
	if !errors.As(err, &ae) || ae.Kind != TokenUnverifiable || !strings.Contains(ae.Reason, "certificate") {
		t.Errorf("an untrusted issuer certificate must fail: %v", err)
	}

	cfg.CAFile = iss.CAFile(t, t.TempDir())
	if v, err = newJWTVerifier(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := v.verify(context.Background(), "dave", tok); err != nil {
		t.Errorf("with ca-file: %v", err)
	}
	cfg.CAFile = "/nonexistent/ca.pem"
	if _, err := newJWTVerifier(cfg); err == nil {
		t.Error("a missing ca-file must be an error")
	}
}

func TestJWTOddKeys(t *testing.T) {
	f := newFixture(t, nil)
	// A symmetric key and a small RSA key under names tokens use are never
	// used, and an unknown key type does not spoil the set.
	smallKey, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	small := &testidp.Key{ID: "small", Alg: jose.RS256, Private: smallKey}
	// The same RSA key published for RS256 but used with PS256.
	crossAlg := &testidp.Key{ID: f.key.ID, Alg: jose.PS256, Private: f.key.Private}
	f.iss.Publish(f.key, small)
	f.iss.PublishRaw(`{"kty":"oct","kid":"sym","k":"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0","alg":"HS256"}`,
		`{"kty":"OKP","crv":"X448","kid":"x448","x":"AAAA"}`)
	if _, ae := f.verify(t, "dave", f.token(t, testidp.Token{User: "dave"})); ae != nil {
		t.Fatalf("odd keys beside a good one: %v", ae)
	}
	_, ae := f.verify(t, "dave", testidp.HS256(t, "sym", []byte("secretsecretsecretsecretsecret"), f.iss.Claims(testidp.Token{User: "dave"})))
	if ae == nil {
		t.Error("an HS256 token with a symmetric key in the JWKS was accepted")
	}
	_, ae = f.verify(t, "dave", testidp.Sign(t, small, f.iss.Claims(testidp.Token{User: "dave"})))
	if ae == nil || !strings.Contains(ae.Reason, "signature does not verify") {
		t.Errorf("a 1024-bit RSA key must not be used: %v", ae)
	}
	_, ae = f.verify(t, "dave", testidp.Sign(t, crossAlg, f.iss.Claims(testidp.Token{User: "dave"})))
	if ae == nil || !strings.Contains(ae.Reason, "signature does not verify") {
		t.Errorf("a key published for RS256 must not verify PS256: %v", ae)
	}
	// A key without kid in the token: every key is tried.
	tok := testidp.SignWithKID(t, f.key, "", f.iss.Claims(testidp.Token{User: "dave"}))
	if _, ae := f.verify(t, "dave", tok); ae != nil {
		t.Errorf("token without kid: %v", ae)
	}
}

func TestUsesToken(t *testing.T) {
	key := testidp.NewRSAKey(t, "k1", jose.RS256)
	iss := testidp.New(t, "acme", false, key)
	users := []config.User{{Name: "svc", Password: "svc"}}
	for _, c := range []struct {
		mode      config.Modes
		svc, dave bool
	}{
		{config.Modes{"static"}, false, false},
		{config.Modes{"jwt"}, true, true},
		{config.Modes{"jwt", "static"}, false, true},
		{config.Modes{"static", "jwt"}, false, true},
	} {
		a, err := New(config.Identity{Mode: c.mode, Users: users, JWT: jwtConfig(iss)})
		if err != nil {
			t.Fatal(err)
		}
		if a.UsesToken("svc") != c.svc || a.UsesToken("dave") != c.dave {
			t.Errorf("mode %v: svc token=%v dave token=%v, want %v %v", c.mode, a.UsesToken("svc"), a.UsesToken("dave"), c.svc, c.dave)
		}
	}
	a, _ := New(config.Identity{Mode: config.Modes{"jwt", "static"}, Users: users, JWT: jwtConfig(iss)})
	if err := a.Prime(context.Background()); err != nil {
		t.Fatalf("prime: %v", err)
	}
	id, err := a.VerifyToken(context.Background(), "dave", testidp.Sign(t, key, iss.Claims(testidp.Token{User: "dave"})))
	if err != nil || id.User != "dave" {
		t.Errorf("VerifyToken: %v %v", id, err)
	}
	s, _ := New(config.Identity{Mode: config.Modes{"static"}, Users: users})
	if _, err := s.VerifyToken(context.Background(), "dave", "x.y.z"); err == nil {
		t.Error("VerifyToken without jwt mode must fail")
	}
	if err := s.Prime(context.Background()); err != nil {
		t.Errorf("Prime without jwt mode: %v", err)
	}
}
