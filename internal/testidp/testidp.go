// Package testidp is a local OpenID Connect issuer for tests: an httptest
// server with discovery and a JWKS, shaped like a Keycloak realm
// (/realms/<realm>/.well-known/openid-configuration,
// /realms/<realm>/protocol/openid-connect/certs), and helpers that sign
// Keycloak-shaped tokens with go-jose — and the forged ones a verifier
// must refuse (alg none, HS256 keyed with the public key).
package testidp

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Key is a signing key of the issuer.
type Key struct {
	ID      string
	Alg     jose.SignatureAlgorithm
	Private crypto.Signer
}

// NewRSAKey makes a 2048-bit RSA key for alg (RS256, PS256, …).
func NewRSAKey(t testing.TB, kid string, alg jose.SignatureAlgorithm) *Key {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return &Key{ID: kid, Alg: alg, Private: k}
}

// NewECKey makes a P-256 key for ES256.
func NewECKey(t testing.TB, kid string) *Key {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &Key{ID: kid, Alg: jose.ES256, Private: k}
}

// PublicPEM is the key's public half as PEM, the bytes an HS256 forgery
// uses as its HMAC secret.
func (k *Key) PublicPEM() []byte {
	der, _ := x509.MarshalPKIXPublicKey(k.Private.Public())
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// Issuer is a running test issuer.
type Issuer struct {
	Server *httptest.Server
	// URL is the issuer ("iss"): <server>/realms/<realm>.
	URL string

	mu        sync.Mutex
	published []jose.JSONWebKey
	extra     []json.RawMessage
	// DiscoveryIssuer, when set, is the "issuer" the discovery document
	// claims instead of URL (a misconfigured or hostile discovery).
	DiscoveryIssuer string
	// JWKSURIOverride, when set, is the jwks_uri discovery advertises.
	JWKSURIOverride string
	// Down makes every request answer 503.
	Down atomic.Bool

	DiscoveryHits atomic.Int64
	JWKSHits      atomic.Int64
}

// New starts an issuer for realm over HTTP (or HTTPS with useTLS) on the
// loopback interface, publishing keys. It stops when the test ends.
func New(t testing.TB, realm string, useTLS bool, keys ...*Key) *Issuer {
	t.Helper()
	iss := &Issuer{}
	mux := http.NewServeMux()
	base := "/realms/" + realm
	mux.HandleFunc(base+"/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		iss.DiscoveryHits.Add(1)
		if iss.Down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		iss.mu.Lock()
		issuer, jwks := iss.URL, iss.JWKSURL()
		if iss.DiscoveryIssuer != "" {
			issuer = iss.DiscoveryIssuer
		}
		if iss.JWKSURIOverride != "" {
			jwks = iss.JWKSURIOverride
		}
		iss.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                issuer,
			"authorization_endpoint":                iss.URL + "/protocol/openid-connect/auth",
			"token_endpoint":                        iss.URL + "/protocol/openid-connect/token",
			"userinfo_endpoint":                     iss.URL + "/protocol/openid-connect/userinfo",
			"jwks_uri":                              jwks,
			"id_token_signing_alg_values_supported": []string{"PS384", "ES384", "RS384", "HS256", "HS512", "ES256", "RS256", "HS384", "ES512", "PS256", "PS512", "RS512"},
			"response_types_supported":              []string{"code", "none", "id_token", "token", "id_token token", "code id_token", "code token", "code id_token token"},
			"subject_types_supported":               []string{"public", "pairwise"},
		})
	})
	mux.HandleFunc(base+"/protocol/openid-connect/certs", func(w http.ResponseWriter, r *http.Request) {
		iss.JWKSHits.Add(1)
		if iss.Down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		iss.mu.Lock()
		var keys []any
		for _, k := range iss.published {
			keys = append(keys, k)
		}
		for _, e := range iss.extra {
			keys = append(keys, e)
		}
		iss.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"keys": keys})
	})
	iss.Server = httptest.NewUnstartedServer(mux)
	iss.Server.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are expected
	if useTLS {
		iss.Server.StartTLS()
	} else {
		iss.Server.Start()
	}
	t.Cleanup(iss.Server.Close)
	iss.URL = iss.Server.URL + base
	iss.Publish(keys...)
	return iss
}

// JWKSURL is where the keys are published.
func (i *Issuer) JWKSURL() string { return i.URL + "/protocol/openid-connect/certs" }

// Publish replaces the published key set (a rotation).
func (i *Issuer) Publish(keys ...*Key) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.published = nil
	for _, k := range keys {
		i.published = append(i.published, jose.JSONWebKey{Key: k.Private.Public(), KeyID: k.ID, Algorithm: string(k.Alg), Use: "sig"})
	}
}

// PublishRaw adds JWK JSON objects as they are (odd or hostile keys).
func (i *Issuer) PublishRaw(keys ...string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	for _, k := range keys {
		i.extra = append(i.extra, json.RawMessage(k))
	}
}

// CAFile writes the HTTPS issuer's certificate as a PEM file in dir.
func (i *Issuer) CAFile(t testing.TB, dir string) string {
	t.Helper()
	cert := i.Server.Certificate()
	if cert == nil {
		t.Fatal("testidp: not a TLS issuer")
	}
	p := filepath.Join(dir, "idp-ca.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Token describes a Keycloak access token.
type Token struct {
	User        string   // preferred_username
	RealmRoles  []string // realm_access.roles
	ClientRoles []string // resource_access.<Client>.roles
	Groups      []string // groups
	Client      string   // azp and the client of ClientRoles; default "pgranger"
	Audience    []string // aud; default [Client, "account"]
	Lifetime    time.Duration
	Extra       map[string]any // more claims, or overrides (nil value: remove)
}

// Claims builds the token's claims as Keycloak 2x issues them.
func (i *Issuer) Claims(tk Token) map[string]any {
	client := tk.Client
	if client == "" {
		client = "pgranger"
	}
	aud := tk.Audience
	if aud == nil {
		aud = []string{client, "account"}
	}
	life := tk.Lifetime
	if life == 0 {
		life = 5 * time.Minute
	}
	now := time.Now()
	realmRoles := append([]string{"offline_access", "uma_authorization", "default-roles-acme"}, tk.RealmRoles...)
	c := map[string]any{
		"exp":                now.Add(life).Unix(),
		"iat":                now.Unix(),
		"auth_time":          now.Unix(),
		"jti":                randomID(),
		"iss":                i.URL,
		"aud":                aud,
		"sub":                "f:" + randomID() + ":" + tk.User,
		"typ":                "Bearer",
		"azp":                client,
		"sid":                randomID(),
		"acr":                "1",
		"allowed-origins":    []string{"*"},
		"realm_access":       map[string]any{"roles": realmRoles},
		"resource_access":    map[string]any{client: map[string]any{"roles": nonNil(tk.ClientRoles)}, "account": map[string]any{"roles": []string{"manage-account", "manage-account-links", "view-profile"}}},
		"scope":              "openid profile email",
		"email_verified":     true,
		"name":               tk.User + " Example",
		"preferred_username": tk.User,
		"given_name":         tk.User,
		"family_name":        "Example",
		"email":              tk.User + "@example.com",
		"groups":             nonNil(tk.Groups),
	}
	for k, v := range tk.Extra {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Sign signs claims with key as a compact JWS with typ JWT and the key's kid.
func Sign(t testing.TB, key *Key, claims map[string]any) string {
	t.Helper()
	return SignWithKID(t, key, key.ID, claims)
}

// SignWithKID signs with key but names kid in the header.
func SignWithKID(t testing.TB, key *Key, kid string, claims map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	sk := jose.SigningKey{Algorithm: key.Alg, Key: key.Private}
	if kid != "" {
		sk.Key = jose.JSONWebKey{Key: key.Private, KeyID: kid}
	}
	signer, err := jose.NewSigner(sk, opts)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Unsigned is a token with alg "none" and an empty signature.
func Unsigned(t testing.TB, kid string, claims map[string]any) string {
	t.Helper()
	return compact(t, map[string]any{"alg": "none", "typ": "JWT", "kid": kid}, claims, nil)
}

// HS256 is a token MACed with secret (the public-key confusion attack when
// secret is a public key's PEM).
func HS256(t testing.TB, kid string, secret []byte, claims map[string]any) string {
	t.Helper()
	mac := func(input []byte) []byte {
		m := hmac.New(sha256.New, secret)
		m.Write(input)
		return m.Sum(nil)
	}
	return compact(t, map[string]any{"alg": "HS256", "typ": "JWT", "kid": kid}, claims, mac)
}

// WithHeader signs claims with key under a header with extra fields (crit, …).
func WithHeader(t testing.TB, key *Key, header map[string]any, claims map[string]any) string {
	t.Helper()
	h := map[string]any{"alg": string(key.Alg), "typ": "JWT", "kid": key.ID}
	for k, v := range header {
		h[k] = v
	}
	return compact(t, h, claims, func(input []byte) []byte {
		sum := sha256.Sum256(input)
		switch k := key.Private.(type) {
		case *rsa.PrivateKey:
			sig, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:])
			if err != nil {
				t.Fatal(err)
			}
			return sig
		}
		t.Fatal("testidp: WithHeader needs an RS256 key")
		return nil
	})
}

func compact(t testing.TB, header, claims map[string]any, sign func([]byte) []byte) string {
	t.Helper()
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	p, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(p)
	var sig []byte
	if sign != nil {
		sig = sign([]byte(input))
	}
	return input + "." + enc.EncodeToString(sig)
}

func randomID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
