package identity

// JWT mode: the client's password is an OpenID Connect token (a Keycloak,
// Okta, Entra ID or Auth0 access or ID token). It is verified against the
// issuer's published keys with go-oidc, then the claims pgranger needs are
// read from dotted paths: the user, roles, groups and user attributes.
//
// What is checked, in this order, each failure with its own reason:
//
//   - shape: a compact JWS (three base64url parts), not larger than
//     maxTokenBytes, no "crit" header;
//   - the header's "alg" is in identity.jwt.allowed-algorithms ("none" and
//     HS* never are: config validation refuses them);
//   - "iss" is identity.jwt.issuer, before any key is looked at, so tokens
//     of other issuers cause no key fetch;
//   - the signature, by the key the header's "kid" names in the issuer's
//     JWKS (found by discovery or identity.jwt.jwks-url). An unknown kid
//     fetches the JWKS again, at most once per jwks-min-refresh-secs;
//   - "exp" (required), "nbf" and "iat", each with clock-skew-secs;
//   - the audience: "aud" holds identity.jwt.audience, or every "aud" is
//     listed in azp-audiences and "azp" is the audience;
//   - the user claim is a non-empty string equal to the startup user.

import (
	"context"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/pgranger/pgranger/config"
)

const (
	// maxTokenBytes bounds the password of a token login; real tokens
	// with many roles stay well under it.
	maxTokenBytes = 32 << 10
	// maxDocumentBytes bounds a discovery document or JWKS.
	maxDocumentBytes = 1 << 20
	// jwksMaxAge: keys older than this are fetched again on next use (a
	// key the issuer withdrew stops being trusted); when that fetch fails
	// the keys in hand stay in use.
	jwksMaxAge = 15 * time.Minute
	// minRSABits refuses toy RSA keys in a JWKS.
	minRSABits = 2048
)

// AuthErrorKind says how a token login failed; pgwire maps it to a SQLSTATE.
type AuthErrorKind int

const (
	// TokenInvalid: the token is not acceptable (28P01).
	TokenInvalid AuthErrorKind = iota
	// TokenUserMismatch: a valid token for another user (28000).
	TokenUserMismatch
	// TokenUnverifiable: the issuer's keys could not be obtained (28000).
	TokenUnverifiable
)

// AuthError is a failed token login. Reason names what was wrong and never
// contains the token.
type AuthError struct {
	Kind   AuthErrorKind
	Reason string
}

func (e *AuthError) Error() string { return e.Reason }

func invalid(format string, args ...any) *AuthError {
	return &AuthError{Kind: TokenInvalid, Reason: fmt.Sprintf(format, args...)}
}

// jwtVerifier verifies tokens for one issuer.
type jwtVerifier struct {
	issuer       string
	audience     string
	azpAudiences map[string]bool
	algs         map[string]bool
	skew, grace  time.Duration
	userClaim    string
	userPath     []string
	rolePaths    []claimPath
	groupPaths   []claimPath
	attrPaths    map[string]claimPath
	keys         *keySet
	verifier     *oidc.IDTokenVerifier
	now          func() time.Time
}

type claimPath struct {
	name string // as configured, for messages
	keys []string
}

func newJWTVerifier(cfg config.JWT) (*jwtVerifier, error) {
	if cfg.Issuer == "" || cfg.Audience == "" {
		return nil, errors.New("identity.jwt: issuer and audience must be set")
	}
	client, err := idpClient(cfg)
	if err != nil {
		return nil, err
	}
	v := &jwtVerifier{
		issuer:       cfg.Issuer,
		audience:     cfg.Audience,
		azpAudiences: map[string]bool{},
		algs:         map[string]bool{},
		skew:         time.Duration(cfg.ClockSkewSecs) * time.Second,
		grace:        time.Duration(cfg.ExpiryGraceSecs) * time.Second,
		userClaim:    cfg.UserClaim,
		attrPaths:    map[string]claimPath{},
		now:          time.Now,
	}
	for _, a := range cfg.AZPAudiences {
		v.azpAudiences[a] = true
	}
	var algs []jose.SignatureAlgorithm
	for _, a := range cfg.AllowedAlgorithms {
		if !isAsymmetric(a) {
			return nil, fmt.Errorf("identity.jwt.allowed-algorithms: %q is not allowed", a)
		}
		v.algs[a] = true
		algs = append(algs, jose.SignatureAlgorithm(a))
	}
	if len(algs) == 0 {
		return nil, errors.New("identity.jwt.allowed-algorithms: empty")
	}
	if v.userPath, err = config.ParseClaimPath(cfg.UserClaim); err != nil {
		return nil, fmt.Errorf("identity.jwt.user-claim: %w", err)
	}
	paths := func(key string, in []string) ([]claimPath, error) {
		var out []claimPath
		for _, p := range in {
			keys, err := config.ParseClaimPath(p)
			if err != nil {
				return nil, fmt.Errorf("identity.jwt.%s: %w", key, err)
			}
			out = append(out, claimPath{name: p, keys: keys})
		}
		return out, nil
	}
	if v.rolePaths, err = paths("roles-claim", cfg.RolesClaim); err != nil {
		return nil, err
	}
	if v.groupPaths, err = paths("groups-claim", cfg.GroupsClaim); err != nil {
		return nil, err
	}
	for attr, p := range cfg.AttributeClaims {
		keys, err := config.ParseClaimPath(p)
		if err != nil {
			return nil, fmt.Errorf("identity.jwt.attribute-claims.%s: %w", attr, err)
		}
		v.attrPaths[attr] = claimPath{name: p, keys: keys}
	}
	v.keys = &keySet{
		issuer:     cfg.Issuer,
		url:        cfg.JWKSURL,
		client:     client,
		algs:       algs,
		minRefresh: time.Duration(cfg.JWKSMinRefresh) * time.Second,
		maxAge:     jwksMaxAge,
		now:        func() time.Time { return v.now() },
	}
	// go-oidc checks the signature (through keySet) and the issuer; the
	// time and audience rules are pgranger's own (skew, azp), below.
	v.verifier = oidc.NewVerifier(cfg.Issuer, v.keys, &oidc.Config{
		SkipClientIDCheck:    true,
		SkipExpiryCheck:      true,
		SupportedSigningAlgs: cfg.AllowedAlgorithms,
	})
	return v, nil
}

func isAsymmetric(alg string) bool {
	for _, a := range config.AsymmetricAlgorithms {
		if a == alg {
			return true
		}
	}
	return false
}

// idpClient is the HTTP client for discovery and JWKS: bounded in time,
// TLS 1.2+, trusting identity.jwt.ca-file when set, and never following a
// redirect to a plain-http URL off the loopback interface.
func idpClient(cfg config.JWT) (*http.Client, error) {
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("identity.jwt.ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("identity.jwt.ca-file: %s holds no PEM certificate", cfg.CAFile)
		}
		tlsCfg.RootCAs = pool
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsCfg
	tr.Proxy = http.ProxyFromEnvironment
	return &http.Client{
		Timeout:   time.Duration(cfg.TimeoutSecs) * time.Second,
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("too many redirects")
			}
			return secureURL(req.URL)
		},
	}, nil
}

// secureURL refuses plain http except on a loopback host.
func secureURL(u *url.URL) error {
	if u.Scheme == "https" || (u.Scheme == "http" && config.IsLoopbackHost(u.Hostname())) {
		return nil
	}
	return fmt.Errorf("%s is not an https:// URL", u.Redacted())
}

// verify checks token and returns the identity it proves for startupUser.
func (v *jwtVerifier) verify(ctx context.Context, startupUser, token string) (*Identity, error) {
	if token == "" {
		return nil, invalid("no token was sent as the password")
	}
	if len(token) > maxTokenBytes {
		return nil, invalid("the token is longer than %d bytes", maxTokenBytes)
	}
	parts := strings.Split(token, ".")
	if len(parts) == 5 {
		return nil, invalid("encrypted tokens (JWE) are not supported; send a signed JWT")
	}
	if len(parts) != 3 {
		return nil, invalid("the password is not a JWT (want header.payload.signature)")
	}
	var header struct {
		Alg  string          `json:"alg"`
		Crit json.RawMessage `json:"crit"`
	}
	if err := decodeSegment(parts[0], &header); err != nil {
		return nil, invalid("the token header is not base64url-encoded JSON")
	}
	switch alg := header.Alg; {
	case strings.EqualFold(alg, "none"):
		return nil, invalid(`the token is unsigned (alg "none"), which is never accepted`)
	case strings.HasPrefix(strings.ToUpper(alg), "HS"):
		return nil, invalid("the token is signed with %q, an HMAC algorithm, which is never accepted", alg)
	case !v.algs[alg]:
		return nil, invalid("the token's algorithm %q is not in identity.jwt.allowed-algorithms", alg)
	}
	if len(header.Crit) > 0 {
		return nil, invalid(`the token has critical header extensions ("crit"), which are not supported`)
	}
	var unverified struct {
		Iss any `json:"iss"`
	}
	if err := decodeSegment(parts[1], &unverified); err != nil {
		return nil, invalid("the token payload is not base64url-encoded JSON")
	}
	if iss, _ := unverified.Iss.(string); iss != v.issuer {
		return nil, invalid("the token's issuer is not identity.jwt.issuer")
	}

	var holder failure
	tok, err := v.verifier.Verify(context.WithValue(ctx, failureKey{}, &holder), token)
	if err != nil {
		if holder.err != nil {
			return nil, holder.err
		}
		return nil, invalid("the token could not be verified")
	}
	var raw json.RawMessage
	if err := tok.Claims(&raw); err != nil {
		return nil, invalid("the token's claims are not a JSON object")
	}
	claims, err := decodeClaims(raw)
	if err != nil {
		return nil, invalid("the token's claims are not a JSON object")
	}

	now := v.now()
	exp, ok, err := numericDate(claims, "exp")
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, invalid(`the token has no "exp" claim`)
	case !now.Before(exp.Add(v.skew)):
		return nil, invalid("the token expired at %s", exp.UTC().Format(time.RFC3339))
	}
	if nbf, ok, err := numericDate(claims, "nbf"); err != nil {
		return nil, err
	} else if ok && now.Add(v.skew).Before(nbf) {
		return nil, invalid("the token is not valid before %s", nbf.UTC().Format(time.RFC3339))
	}
	if iat, ok, err := numericDate(claims, "iat"); err != nil {
		return nil, err
	} else if ok && now.Add(v.skew).Before(iat) {
		return nil, invalid("the token was issued in the future (%s)", iat.UTC().Format(time.RFC3339))
	}
	if err := v.checkAudience(tok.Audience, claims["azp"]); err != nil {
		return nil, err
	}

	user, err := v.user(claims)
	if err != nil {
		return nil, err
	}
	if user != startupUser {
		return nil, &AuthError{Kind: TokenUserMismatch, Reason: fmt.Sprintf("the token is for user %q, not the startup user %q", user, startupUser)}
	}
	roles, err := stringsAt(claims, v.rolePaths)
	if err != nil {
		return nil, err
	}
	groups, err := stringsAt(claims, v.groupPaths)
	if err != nil {
		return nil, err
	}
	attrs := make(map[string]string, len(v.attrPaths))
	for attr, p := range v.attrPaths {
		val, ok, err := scalarAt(claims, p)
		if err != nil {
			return nil, err
		}
		if ok {
			attrs[attr] = val
		}
	}
	sub, _ := claims["sub"].(string)
	jti, _ := claims["jti"].(string)
	return &Identity{
		User:            user,
		Groups:          groups,
		Roles:           roles,
		Attributes:      attrs,
		Method:          MethodJWT,
		Subject:         sub,
		TokenID:         jti,
		TokenExpiry:     exp,
		SessionDeadline: exp.Add(v.skew + v.grace),
	}, nil
}

func (v *jwtVerifier) checkAudience(aud []string, azp any) error {
	for _, a := range aud {
		if a == v.audience {
			return nil
		}
	}
	if len(v.azpAudiences) > 0 {
		all := true
		for _, a := range aud {
			all = all && v.azpAudiences[a]
		}
		if s, _ := azp.(string); all && s == v.audience {
			return nil
		}
	}
	return invalid("the token's audience is not identity.jwt.audience %q", v.audience)
}

func (v *jwtVerifier) user(claims map[string]any) (string, error) {
	val, ok := lookup(claims, v.userPath)
	s, isString := val.(string)
	if !ok || !isString || s == "" {
		return "", invalid("the token has no %q claim with a user name (identity.jwt.user-claim)", v.userClaim)
	}
	return s, nil
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func decodeClaims(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("null claims")
	}
	return m, nil
}

// numericDate reads a NumericDate claim (seconds since the epoch).
func numericDate(claims map[string]any, name string) (time.Time, bool, error) {
	v, ok := claims[name]
	if !ok || v == nil {
		return time.Time{}, false, nil
	}
	n, isNum := v.(json.Number)
	if !isNum {
		return time.Time{}, false, invalid("the token's %q claim is not a number", name)
	}
	f, err := n.Float64()
	if err != nil || f < 0 || f > 1e11 {
		return time.Time{}, false, invalid("the token's %q claim is not a valid time", name)
	}
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9)), true, nil
}

// lookup follows a claim path through nested objects.
func lookup(claims map[string]any, keys []string) (any, bool) {
	var cur any = claims
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, cur != nil
}

// stringsAt collects the strings of several claim paths: each may be
// missing (nothing), a string, or a list of strings; anything else refuses
// the token, as a misread claim must not silently grant or drop a role.
func stringsAt(claims map[string]any, paths []claimPath) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, p := range paths {
		val, ok := lookup(claims, p.keys)
		if !ok {
			continue
		}
		switch t := val.(type) {
		case string:
			add(t)
		case []any:
			for _, e := range t {
				s, ok := e.(string)
				if !ok {
					return nil, invalid("the token's %q claim holds a %s, not a string", p.name, jsonKind(e))
				}
				add(s)
			}
		default:
			return nil, invalid("the token's %q claim is a %s, not a string or a list of strings", p.name, jsonKind(val))
		}
	}
	sort.Strings(out)
	return out, nil
}

// scalarAt reads a user attribute: a string, number or boolean, or a list
// of exactly one of those (Keycloak's multivalued user-attribute mapper).
func scalarAt(claims map[string]any, p claimPath) (string, bool, error) {
	val, ok := lookup(claims, p.keys)
	if !ok {
		return "", false, nil
	}
	if l, isList := val.([]any); isList {
		if len(l) != 1 {
			return "", false, invalid("the token's %q claim is a list of %d values; an attribute takes one", p.name, len(l))
		}
		val = l[0]
	}
	switch t := val.(type) {
	case string:
		return t, true, nil
	case json.Number:
		return t.String(), true, nil
	case bool:
		return strconv.FormatBool(t), true, nil
	}
	return "", false, invalid("the token's %q claim is a %s, not a string, number or boolean", p.name, jsonKind(val))
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "list"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// failure carries keySet's reason out through go-oidc, which only wraps
// errors as text.
type failure struct{ err *AuthError }

type failureKey struct{}

func fail(ctx context.Context, e *AuthError) error {
	if h, ok := ctx.Value(failureKey{}).(*failure); ok {
		h.err = e
	}
	return e
}

// keySet is the issuer's JWKS as an oidc.KeySet: fetched on first use
// (after discovery when no jwks-url is configured), fetched again when a
// token names a key it does not hold or the keys are older than maxAge —
// but never more than once per minRefresh, so tokens with made-up "kid"s
// cannot turn pgranger into a load generator against the issuer.
type keySet struct {
	issuer     string
	client     *http.Client
	algs       []jose.SignatureAlgorithm
	minRefresh time.Duration
	maxAge     time.Duration
	now        func() time.Time

	fetchMu sync.Mutex // one discovery/fetch at a time

	mu        sync.RWMutex
	url       string // the JWKS URL; "" until discovered
	keys      []jose.JSONWebKey
	fetchedAt time.Time // last successful fetch
	attemptAt time.Time // last attempt
	lastErr   error

	fetches atomic.Int64 // JWKS and discovery requests made
}

func (k *keySet) snapshot() ([]jose.JSONWebKey, time.Time, time.Time, error) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.keys, k.fetchedAt, k.attemptAt, k.lastErr
}

// VerifySignature implements oidc.KeySet.
func (k *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSignedCompact(raw, k.algs)
	if err != nil || len(jws.Signatures) != 1 {
		return nil, fail(ctx, invalid("the token is not a JWS with one signature"))
	}
	hdr := jws.Signatures[0].Header
	kid, alg := hdr.KeyID, hdr.Algorithm

	keys, fetchedAt, _, _ := k.snapshot()
	if len(keys) == 0 || !hasKey(keys, kid) || k.now().Sub(fetchedAt) > k.maxAge {
		k.refresh(ctx)
		var lastErr error
		keys, _, _, lastErr = k.snapshot()
		if len(keys) == 0 {
			reason := "the issuer's signing keys could not be fetched"
			if lastErr != nil {
				reason += ": " + lastErr.Error()
			}
			return nil, fail(ctx, &AuthError{Kind: TokenUnverifiable, Reason: reason})
		}
	}
	if !hasKey(keys, kid) {
		if kid == "" {
			return nil, fail(ctx, invalid("the token names no signing key (kid) and no key of the issuer verifies it"))
		}
		return nil, fail(ctx, invalid("the token's signing key %q is not in the issuer's key set", kid))
	}
	for _, key := range keys {
		if kid != "" && key.KeyID != kid {
			continue
		}
		pub, ok := usable(key, alg)
		if !ok {
			continue
		}
		if payload, err := jws.Verify(pub); err == nil {
			return payload, nil
		}
	}
	return nil, fail(ctx, invalid("the token's signature does not verify"))
}

func hasKey(keys []jose.JSONWebKey, kid string) bool {
	if kid == "" {
		return len(keys) > 0
	}
	for _, k := range keys {
		if k.KeyID == kid {
			return true
		}
	}
	return false
}

// usable returns the public key of a JWK fit to verify alg: a signing key
// (use "sig" or unset) declaring that algorithm or none, RSA of at least
// minRSABits for RS*/PS*, ECDSA for ES*. Symmetric keys are never used.
func usable(key jose.JSONWebKey, alg string) (any, bool) {
	if (key.Use != "" && key.Use != "sig") || (key.Algorithm != "" && key.Algorithm != alg) {
		return nil, false
	}
	switch pub := key.Public().Key.(type) {
	case *rsa.PublicKey:
		if (strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")) && pub.N.BitLen() >= minRSABits {
			return pub, true
		}
	case *ecdsa.PublicKey:
		if strings.HasPrefix(alg, "ES") {
			return pub, true
		}
	}
	return nil, false
}

// refresh fetches the JWKS (discovering its URL first if needed) unless an
// attempt was made less than minRefresh ago.
func (k *keySet) refresh(ctx context.Context) {
	k.fetchMu.Lock()
	defer k.fetchMu.Unlock()
	_, _, attemptAt, _ := k.snapshot()
	if !attemptAt.IsZero() && k.now().Sub(attemptAt) < k.minRefresh {
		return
	}
	k.mu.Lock()
	k.attemptAt = k.now()
	jwksURL := k.url
	k.mu.Unlock()

	keys, jwksURL, err := k.fetch(ctx, jwksURL)
	k.mu.Lock()
	defer k.mu.Unlock()
	if jwksURL != "" {
		k.url = jwksURL
	}
	if err != nil {
		k.lastErr = err
		return
	}
	k.keys, k.fetchedAt, k.lastErr = keys, k.now(), nil
}

func (k *keySet) fetch(ctx context.Context, jwksURL string) ([]jose.JSONWebKey, string, error) {
	if jwksURL == "" {
		k.fetches.Add(1)
		p, err := oidc.NewProvider(oidc.ClientContext(ctx, k.client), k.issuer)
		if err != nil {
			return nil, "", fmt.Errorf("discovery at %s/.well-known/openid-configuration failed: %v", strings.TrimSuffix(k.issuer, "/"), err)
		}
		var meta struct {
			JWKSURL string `json:"jwks_uri"`
		}
		if err := p.Claims(&meta); err != nil || meta.JWKSURL == "" {
			return nil, "", errors.New("the discovery document has no jwks_uri")
		}
		u, err := url.Parse(meta.JWKSURL)
		if err != nil || u.Host == "" {
			return nil, "", fmt.Errorf("the discovery document's jwks_uri %q is not a URL", meta.JWKSURL)
		}
		if err := secureURL(u); err != nil {
			return nil, "", fmt.Errorf("the discovery document's jwks_uri: %v", err)
		}
		jwksURL = meta.JWKSURL
	}
	k.fetches.Add(1)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, jwksURL, nil)
	if err != nil {
		return nil, jwksURL, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Cache-Control", "no-cache")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, jwksURL, fmt.Errorf("fetching the JWKS: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	if err != nil {
		return nil, jwksURL, fmt.Errorf("reading the JWKS: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, jwksURL, fmt.Errorf("fetching the JWKS: %s", resp.Status)
	}
	if len(body) > maxDocumentBytes {
		return nil, jwksURL, fmt.Errorf("the JWKS is larger than %d bytes", maxDocumentBytes)
	}
	keys, err := parseJWKS(body)
	return keys, jwksURL, err
}

// parseJWKS reads a JWK Set, skipping keys go-jose does not understand
// (RFC 7517 §5: unknown key types are ignored) and keeping public halves.
func parseJWKS(body []byte) ([]jose.JSONWebKey, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("the JWKS is not JSON: %v", err)
	}
	var out []jose.JSONWebKey
	for _, raw := range doc.Keys {
		var k jose.JSONWebKey
		if err := json.Unmarshal(raw, &k); err != nil || !k.Valid() {
			continue
		}
		if pub := k.Public(); pub.Valid() {
			out = append(out, pub)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("the JWKS holds no usable key")
	}
	return out, nil
}

// prime discovers and fetches the keys ahead of the first login.
func (k *keySet) prime(ctx context.Context) error {
	k.refresh(ctx)
	keys, _, _, err := k.snapshot()
	if len(keys) == 0 {
		if err == nil {
			err = errors.New("no keys")
		}
		return err
	}
	return nil
}
