package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgranger/pgranger/config"
	"github.com/pgranger/pgranger/internal/testkeycloak"
)

// Token logins against a real Keycloak (internal/testkeycloak): the
// compose demo's realm, deploy/keycloak/pgranger-realm.json, imported as
// it is, and pgranger configured with the demo's identity.jwt settings
// from deploy/pgranger/pgranger.toml, so what is tested is what the demo
// runs; only the issuer's host and port differ. One Keycloak serves every
// test of this file; it starts on first use and stops in TestMain.

// kcSkipEnv lets a developer without Java or Maven skip these tests; with
// CI=true it is refused.
const kcSkipEnv = "PGRANGERTEST_SKIP_KEYCLOAK"

// kcRealm is the demo realm's name; kcOtherRealm is a second realm made
// from the same file, whose tokens pgranger must refuse.
const (
	kcRealm      = "pgranger"
	kcOtherRealm = "pgranger-other"
)

var (
	kcOnce   sync.Once
	kcServer *testkeycloak.Server
	kcErr    error
)

// stopKeycloak is called by TestMain.
func stopKeycloak() {
	if kcServer != nil {
		kcServer.Stop()
	}
}

// sharedKeycloak starts the one Keycloak of the run, or fails t (skips
// only with PGRANGERTEST_SKIP_KEYCLOAK=1 outside CI).
func sharedKeycloak(t *testing.T) *testkeycloak.Server {
	t.Helper()
	if os.Getenv(kcSkipEnv) == "1" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s=1 is not honoured with CI=true: the Keycloak tests must run in CI", kcSkipEnv)
		}
		t.Skipf("SKIPPED: %s=1: the tests against a real Keycloak did not run", kcSkipEnv)
	}
	kcOnce.Do(func() {
		realm, err := os.ReadFile(filepath.Join(repoRoot, "deploy/keycloak/pgranger-realm.json"))
		if err != nil {
			kcErr = err
			return
		}
		other, err := renamedRealm(realm, kcOtherRealm)
		if err != nil {
			kcErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		kcServer, kcErr = testkeycloak.Start(ctx, testkeycloak.Options{Realms: [][]byte{realm, other}})
		if kcErr != nil {
			return
		}
		fmt.Fprintf(os.Stderr, "e2e: Keycloak %s ready at %s in %v\n", testkeycloak.Version, kcServer.URL, kcServer.Started.Round(100*time.Millisecond))
	})
	if kcErr != nil {
		t.Fatalf("Keycloak: %v\n(set %s=1 to skip the Keycloak tests where Java or Maven is knowingly absent; not with CI=true)", kcErr, kcSkipEnv)
	}
	return kcServer
}

// renamedRealm is the realm file with another name: the same users,
// clients and keys' shape, another issuer.
func renamedRealm(realm []byte, name string) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(realm, &m); err != nil {
		return nil, fmt.Errorf("deploy/keycloak/pgranger-realm.json: %w", err)
	}
	m["realm"] = name
	return json.Marshal(m)
}

// kcEnv is a proxy that trusts the shared Keycloak's demo realm.
type kcEnv struct {
	kc    *testkeycloak.Server
	proxy *proxy
	cert  string
}

// startKeycloakProxy: identity.mode "jwt" with the demo's identity.jwt
// settings (audience and claim paths read from deploy/pgranger/pgranger.toml),
// the issuer of the running Keycloak, TLS, and the demo bundle plus the
// policies of idpdb (idpPolicies: realm and client roles decide masks).
func startKeycloakProxy(t *testing.T, env map[string]string) *kcEnv {
	t.Helper()
	kc := sharedKeycloak(t)
	idpFixtures(t)
	demo, err := config.Load(filepath.Join(repoRoot, "deploy/pgranger/pgranger.toml"), []string{"PGRANGER_POLICY__RANGER__ADMIN_PASSWORD=unused", "PGRANGER_ADMIN__TOKEN=unused"})
	if err != nil {
		t.Fatalf("deploy/pgranger/pgranger.toml: %v", err)
	}
	jwt := demo.Identity.JWT
	cert, keyFile := writeSelfSigned(t, t.TempDir())
	e := map[string]string{
		"PGRANGER_IDENTITY__MODE":                 "jwt",
		"PGRANGER_IDENTITY__JWT__ISSUER":          kc.Issuer(kcRealm),
		"PGRANGER_IDENTITY__JWT__AUDIENCE":        jwt.Audience,
		"PGRANGER_IDENTITY__JWT__USER_CLAIM":      jwt.UserClaim,
		"PGRANGER_IDENTITY__JWT__ROLES_CLAIM":     strings.Join(jwt.RolesClaim, ","),
		"PGRANGER_IDENTITY__JWT__GROUPS_CLAIM":    strings.Join(jwt.GroupsClaim, ","),
		"PGRANGER_LISTEN__TLS_CERT":               cert,
		"PGRANGER_LISTEN__TLS_KEY":                keyFile,
		"PGRANGER_IDENTITY__JWT__TIMEOUT_SECS":    "10",
		"PGRANGER_IDENTITY__JWT__CLOCK_SKEW_SECS": "0",
	}
	for k, v := range env {
		e[k] = v
	}
	var attrs []string
	for k, v := range jwt.AttributeClaims {
		attrs = append(attrs, fmt.Sprintf("%q = %q", k, v))
	}
	doc := demoPolicies(t)
	var extra map[string]any
	if err := json.Unmarshal(idpPolicies(t), &extra); err != nil {
		t.Fatal(err)
	}
	for _, p := range extra["policies"].([]any) {
		pol := p.(map[string]any)
		if pol["name"] == "idp ssn" {
			// The client role pii-reader (resource_access.pgranger.roles)
			// sees the last four digits; idpPolicies gives that to the
			// realm role analyst, which the demo realm's bob also has.
			pol["dataMaskPolicyItems"] = []any{
				map[string]any{"accesses": []any{map[string]any{"type": "select", "isAllowed": true}}, "roles": []string{"auditor"}, "dataMaskInfo": map[string]any{"dataMaskType": "MASK_NONE"}},
				map[string]any{"accesses": []any{map[string]any{"type": "select", "isAllowed": true}}, "roles": []string{"pii-reader"}, "dataMaskInfo": map[string]any{"dataMaskType": "MASK_SHOW_LAST_4"}},
				map[string]any{"accesses": []any{map[string]any{"type": "select", "isAllowed": true}}, "groups": []string{"public"}, "dataMaskInfo": map[string]any{"dataMaskType": "MASK_NULL"}},
			}
		}
		doc["policies"] = append(doc["policies"].([]any), pol)
	}
	doc.bump()
	p := startProxy(t, proxyOptions{policies: doc.bytes(t), env: e,
		extraConfig: "[identity.jwt.attribute-claims]\n" + strings.Join(attrs, "\n") + "\n"})
	return &kcEnv{kc: kc, proxy: p, cert: cert}
}

// token is a password-grant access token of the demo realm's client.
func (e *kcEnv) token(t *testing.T, realm, client, user string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tok, err := e.kc.PasswordToken(ctx, realm, client, user, user) // demo passwords are the user names
	if err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

func (e *kcEnv) dial(database, user, token string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://%s@%s/%s?sslmode=verify-full&sslrootcert=%s", user, e.proxy.addr, database, e.cert))
	if err != nil {
		return nil, err
	}
	cfg.Password = token
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return pgx.ConnectConfig(ctx, cfg)
}

func (e *kcEnv) connect(t *testing.T, database, user, token string) *pgx.Conn {
	t.Helper()
	conn, err := e.dial(database, user, token)
	if err != nil {
		t.Fatalf("token login as %s: %v\n%s", user, err, e.proxy.log())
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func (e *kcEnv) refused(t *testing.T, user, token string) *pgconn.PgError {
	t.Helper()
	conn, err := e.dial(idpDB, user, token)
	if err == nil {
		conn.Close(context.Background())
		t.Fatalf("login as %s succeeded, want a refusal", user)
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("login as %s: %v, want a server error", user, err)
	}
	return pe
}

// The demo's walk-through (docs/demo.md) with real tokens: groups decide
// the demo's masks and row filters, the region claim its filter, realm and
// client roles the masks of idpdb; pgx and psql over TLS.
func TestKeycloakLoginsMapRolesAndGroups(t *testing.T) {
	t.Parallel() // mostly waits for Keycloak
	e := startKeycloakProxy(t, nil)
	alice, bob, carol := e.token(t, kcRealm, "pgranger", "alice"), e.token(t, kcRealm, "pgranger", "bob"), e.token(t, kcRealm, "pgranger", "carol")

	orders := "SELECT id, ssn, amount, region FROM sales.orders ORDER BY id"
	b := e.connect(t, "demo", "bob", bob)
	equalLines(t, "bob's orders (docs/demo.md)", rows(t, b, orders), []string{
		"1|xxx-xx-1111|1200.50|US", "3|xxx-xx-3333|4410.25|US", "5|xxx-xx-5555|1780.00|US"})
	if _, err := tryRows(b, "SELECT salary FROM hr.employees"); sqlstate(err) != "42501" {
		t.Errorf("bob reading salaries: %v, want 42501", err)
	}
	equalLines(t, "bob's identity", rows(t, b, "SELECT current_user, current_available_roles()::text, current_user_groups()::text"),
		[]string{"bob|{analyst,pii-reader}|{analysts}"})
	a := e.connect(t, "demo", "alice", alice)
	equalLines(t, "alice's orders", rows(t, a, orders), kcAliceOrders)
	c := e.connect(t, "demo", "carol", carol)
	equalLines(t, "carol's orders", rows(t, c, orders), kcCarolOrders)
	equalLines(t, "carol's identity", rows(t, c, "SELECT current_available_roles()::text, current_user_groups()::text"),
		[]string{"{support}|{support}"})

	// idpdb: the realm role auditor sees SSNs, the client role pii-reader
	// their last four digits, anyone else NULL.
	ssn := "SELECT id, ssn FROM idp.accounts ORDER BY id"
	for _, c := range []struct {
		user, token string
		want        []string
	}{
		{"alice", alice, []string{"1|111-11-1111", "2|222-22-2222"}},
		{"bob", bob, []string{"1|xxx-xx-1111", "2|xxx-xx-2222"}},
		{"carol", carol, []string{"1|NULL", "2|NULL"}},
	} {
		equalLines(t, c.user+"'s idp.accounts", rows(t, e.connect(t, idpDB, c.user, c.token), ssn), c.want)
	}

	// psql takes the token as PGPASSWORD.
	path, err := exec.LookPath("psql")
	if err != nil {
		t.Fatal("psql is not installed (make test installs postgresql-client)")
	}
	host, port, _ := net.SplitHostPort(e.proxy.addr)
	cmd := exec.Command(path, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1",
		fmt.Sprintf("host=%s port=%s dbname=demo user=bob sslmode=verify-full sslrootcert=%s", host, port, e.cert), "-c", orders)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+bob, "PGCONNECT_TIMEOUT=10", "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "1|xxx-xx-1111|1200.50|US\n3|xxx-xx-3333|4410.25|US\n5|xxx-xx-5555|1780.00|US" {
		t.Errorf("psql with bob's Keycloak token: %v\n%s", err, out)
	}
	logs := e.proxy.log()
	for _, tok := range []string{alice, bob, carol} {
		if strings.Contains(logs, tok) || strings.Contains(logs, tok[strings.LastIndexByte(tok, '.')+1:]) {
			t.Errorf("the proxy's log holds a token")
		}
	}
}

// What alice (group compliance) and carol (group support, region EU) see
// of the demo's orders.
var (
	kcAliceOrders = []string{
		"1|111-11-1111|1200.50|US", "2|222-22-2222|830.00|EU", "3|333-33-3333|4410.25|US", "4|444-44-4444|299.99|EU",
		"5|555-55-5555|1780.00|US", "6|666-66-6666|955.10|APAC", "7|777-77-7777|3120.00|EU", "8|NULL|42.00|APAC"}
	kcCarolOrders = []string{"2|xxx-xx-2222|NULL|EU", "4|xxx-xx-4444|NULL|EU", "7|xxx-xx-7777|NULL|EU"}
)

// A session ends when its Keycloak token expires: a client of the demo
// realm with a 10-second access-token lifespan (time enough to log in on a
// busy machine) (Keycloak's per-client
// "access.token.lifespan", set through the admin API) and pgranger with no
// clock skew or grace. The idle session gets FATAL 28000; the same token
// then cannot log in again (28P01).
func TestKeycloakSessionEndsWithItsToken(t *testing.T) {
	t.Parallel()
	e := startKeycloakProxy(t, map[string]string{"PGRANGER_IDENTITY__JWT__EXPIRY_GRACE_SECS": "0"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.kc.CreateClient(ctx, kcRealm, kcClient("pgranger-short", true, map[string]any{"access.token.lifespan": "10"})); err != nil {
		t.Fatal(err)
	}
	tok, err := e.kc.PasswordToken(ctx, kcRealm, "pgranger-short", "bob", "bob")
	if err != nil {
		t.Fatal(err)
	}
	if tok.ExpiresIn != 10 {
		t.Fatalf("the short client's token lives %d s, want 10", tok.ExpiresIn)
	}
	// This client has no region mapper, so the demo's orders (filtered by
	// ${{USER.region}}) are refused to it; idpdb's tables are not.
	conn := e.connect(t, idpDB, "bob", tok.AccessToken)
	equalLines(t, "before expiry", rows(t, conn, "SELECT current_user, id FROM idp.accounts ORDER BY id"), []string{"bob|1", "bob|2"})
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	err = conn.PgConn().WaitForNotification(wctx)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "28000" || pe.Severity != "FATAL" || !strings.Contains(pe.Message, "pgranger: the session's token expired at") {
		t.Errorf("idle session at its token's expiry: %v, want FATAL 28000", err)
	}
	pe = e.refused(t, "bob", tok.AccessToken)
	if pe.Code != "28P01" || !strings.Contains(pe.Message, "the token expired at") {
		t.Errorf("the expired token: %s %q, want 28P01", pe.Code, pe.Message)
	}
}

// Tokens pgranger must refuse, all from the same Keycloak: another
// realm's (another issuer), one whose payload was changed after signing,
// and one issued to a client that does not put pgranger in its audience.
func TestKeycloakRefusedTokens(t *testing.T) {
	t.Parallel()
	e := startKeycloakProxy(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.kc.CreateClient(ctx, kcRealm, kcClient("reports", false, nil)); err != nil {
		t.Fatal(err)
	}
	other := e.token(t, kcOtherRealm, "pgranger", "bob")
	tampered := kcTamper(t, e.token(t, kcRealm, "pgranger", "bob"), func(c map[string]any) { c["groups"] = []any{"compliance"} })
	reports := e.token(t, kcRealm, "reports", "bob")
	for _, c := range []struct{ name, token, reason string }{
		{"another realm", other, "the token's issuer is not identity.jwt.issuer"},
		{"tampered", tampered, "the token's signature does not verify"},
		{"another audience", reports, `the token's audience is not identity.jwt.audience "pgranger"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			pe := e.refused(t, "bob", c.token)
			if pe.Code != "28P01" || !strings.Contains(pe.Message, c.reason) {
				t.Errorf("%s %q, want 28P01 with %q", pe.Code, pe.Message, c.reason)
			}
		})
	}
	// A good token of the same user still works.
	conn := e.connect(t, "demo", "bob", e.token(t, kcRealm, "pgranger", "bob"))
	equalLines(t, "bob", rows(t, conn, "SELECT count(*) FROM sales.orders"), []string{"3"})
}

// kcClient is a public client with the password grant and the demo
// client's groups mapper. withAudience adds the mapper that puts pgranger
// in its tokens' audience; without it, the client's scope is limited to
// its own roles (fullScopeAllowed false), since Keycloak otherwise adds
// every client whose roles the token carries (bob's pii-reader of
// pgranger) to the audience.
func kcClient(id string, withAudience bool, attributes map[string]any) map[string]any {
	mappers := []any{map[string]any{
		"name": "groups", "protocol": "openid-connect", "protocolMapper": "oidc-group-membership-mapper",
		"config": map[string]any{"claim.name": "groups", "full.path": "false", "access.token.claim": "true"},
	}}
	if withAudience {
		mappers = append(mappers, map[string]any{
			"name": "audience pgranger", "protocol": "openid-connect", "protocolMapper": "oidc-audience-mapper",
			"config": map[string]any{"included.client.audience": "pgranger", "access.token.claim": "true"},
		})
	}
	c := map[string]any{
		"clientId": id, "enabled": true, "publicClient": true, "directAccessGrantsEnabled": true,
		"standardFlowEnabled": false, "protocol": "openid-connect", "fullScopeAllowed": withAudience,
		"protocolMappers": mappers,
	}
	if attributes != nil {
		c["attributes"] = attributes
	}
	return c
}

// kcTamper changes a signed token's claims and keeps its signature.
func kcTamper(t *testing.T, token string, edit func(map[string]any)) string {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWS: %d parts", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	edit(claims)
	payload, _ = json.Marshal(claims)
	parts[1] = base64.RawURLEncoding.EncodeToString(payload)
	return strings.Join(parts, ".")
}
