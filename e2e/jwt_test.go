package e2e

import (
	"bufio"
	"context"
	bin "encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgranger/pgranger/internal/testidp"
)

// Token login end to end: a local OIDC issuer shaped like a Keycloak realm,
// the built proxy with identity.mode = ["jwt", "static"] and TLS, and pgx
// and psql logging in with tokens as their passwords. The tables live in a
// database of their own, idpdb, so nothing here touches the demo data.

const idpDB = "idpdb"

var idpOnce sync.Once
var idpErr error

func idpFixtures(t *testing.T) {
	t.Helper()
	requireCluster(t)
	idpOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if idpErr = cluster.CreateDatabase(ctx, idpDB); idpErr != nil {
			return
		}
		idpErr = cluster.Exec(ctx, idpDB, `
CREATE SCHEMA idp;
GRANT USAGE ON SCHEMA idp TO pgranger_svc;
CREATE TABLE idp.accounts (id int PRIMARY KEY, owner text, ssn text);
INSERT INTO idp.accounts VALUES (1, 'Ada', '111-11-1111'), (2, 'Alan', '222-22-2222');
CREATE TABLE idp.territory (region text, note text);
INSERT INTO idp.territory VALUES ('dave', 'north'), ('erin', 'south'), ('frank', 'east'), ('dave', 'west');
CREATE TABLE idp.branches (id int, region text, city text);
INSERT INTO idp.branches VALUES (1, 'US', 'Boston'), (2, 'EU', 'Lyon'), (3, 'EU', 'Turin'), (4, 'APAC', 'Osaka');
GRANT SELECT ON ALL TABLES IN SCHEMA idp TO pgranger_svc;`)
	})
	if idpErr != nil {
		t.Fatalf("idp fixtures: %v", idpErr)
	}
}

// idpPolicies: the roles in the token decide. analyst, auditor and support
// may read idp; ssn is clear for auditor, last four for analyst, NULL for
// the rest; territory rows are the user's own (Hive's current_user());
// branches rows are the region the token's attribute claim names.
func idpPolicies(t *testing.T) []byte {
	t.Helper()
	item := func(roles, groups []string) map[string]any {
		return map[string]any{"accesses": []any{map[string]any{"type": "select", "isAllowed": true}}, "roles": roles, "groups": groups}
	}
	mask := func(roles, groups []string, typ string) map[string]any {
		it := item(roles, groups)
		it["dataMaskInfo"] = map[string]any{"dataMaskType": typ}
		return it
	}
	filter := func(expr string) map[string]any {
		it := item(nil, []string{"public"})
		it["rowFilterInfo"] = map[string]any{"filterExpr": expr}
		return it
	}
	res := func(table, column string) map[string]any {
		r := map[string]any{"database": map[string]any{"values": []string{"idp"}}, "table": map[string]any{"values": []string{table}}}
		if column != "" {
			r["column"] = map[string]any{"values": []string{column}}
		}
		return r
	}
	doc := demoPolicies(t)
	doc["policies"] = []any{
		map[string]any{"id": 900, "name": "idp by role", "policyType": 0, "isEnabled": true, "resources": res("*", "*"),
			"policyItems": []any{item([]string{"analyst", "auditor", "support"}, nil)}},
		map[string]any{"id": 910, "name": "idp ssn", "policyType": 1, "isEnabled": true, "resources": res("accounts", "ssn"),
			"dataMaskPolicyItems": []any{mask([]string{"auditor"}, nil, "MASK_NONE"), mask([]string{"analyst"}, nil, "MASK_SHOW_LAST_4"), mask(nil, []string{"public"}, "MASK_NULL")}},
		map[string]any{"id": 920, "name": "own territory", "policyType": 2, "isEnabled": true, "resources": res("territory", ""),
			"rowFilterPolicyItems": []any{filter("region = current_user()")}},
		map[string]any{"id": 930, "name": "branches of the user's region", "policyType": 2, "isEnabled": true, "resources": res("branches", ""),
			"rowFilterPolicyItems": []any{filter("region = '${{USER.region}}'")}},
	}
	doc.bump()
	return doc.bytes(t)
}

// idpEnv is the proxy for iss: jwt and static combined, TLS with cert/key.
type idpEnv struct {
	iss      *testidp.Issuer
	key      *testidp.Key
	proxy    *proxy
	cert     string
	tokens   []string // every token a test sent, to check logs for leaks
	tokensMu sync.Mutex
}

func startIdP(t *testing.T, env map[string]string) *idpEnv {
	t.Helper()
	idpFixtures(t)
	key := testidp.NewRSAKey(t, "rsa-2026-01", jose.RS256)
	iss := testidp.New(t, "acme", false, key)
	cert, keyFile := writeSelfSigned(t, t.TempDir())
	e := map[string]string{
		"PGRANGER_IDENTITY__MODE":                       "jwt,static",
		"PGRANGER_IDENTITY__JWT__ISSUER":                iss.URL,
		"PGRANGER_IDENTITY__JWT__AUDIENCE":              "pgranger",
		"PGRANGER_IDENTITY__JWT__ROLES_CLAIM":           "realm_access.roles,resource_access.pgranger.roles",
		"PGRANGER_IDENTITY__JWT__JWKS_MIN_REFRESH_SECS": "1",
		"PGRANGER_LISTEN__TLS_CERT":                     cert,
		"PGRANGER_LISTEN__TLS_KEY":                      keyFile,
		"PGRANGER_LOG__LEVEL":                           "debug",
	}
	for k, v := range env {
		e[k] = v
	}
	p := startProxy(t, proxyOptions{policies: idpPolicies(t), env: e,
		extraConfig: "[identity.jwt.attribute-claims]\nregion = \"region\"\n"})
	ie := &idpEnv{iss: iss, key: key, proxy: p, cert: cert}
	t.Cleanup(func() { ie.checkNoTokenLeak(t) })
	return ie
}

func (e *idpEnv) token(t *testing.T, tk testidp.Token) string {
	t.Helper()
	return e.sign(t, e.key, e.iss.Claims(tk))
}

func (e *idpEnv) sign(t *testing.T, key *testidp.Key, claims map[string]any) string {
	t.Helper()
	return e.remember(testidp.Sign(t, key, claims))
}

func (e *idpEnv) remember(tok string) string {
	e.tokensMu.Lock()
	e.tokens = append(e.tokens, tok)
	e.tokensMu.Unlock()
	return tok
}

// checkNoTokenLeak: neither the proxy's log nor its audit file holds any
// token or signature a test sent.
func (e *idpEnv) checkNoTokenLeak(t *testing.T) {
	logs := e.proxy.log()
	auditLog, _ := os.ReadFile(filepath.Join(e.proxy.dir, "audit.jsonl"))
	e.tokensMu.Lock()
	defer e.tokensMu.Unlock()
	for _, tok := range e.tokens {
		parts := strings.Split(tok, ".")
		sig := parts[len(parts)-1]
		for what, text := range map[string]string{"log": logs, "audit": string(auditLog)} {
			if strings.Contains(text, tok) || (len(sig) > 16 && strings.Contains(text, sig)) {
				t.Errorf("the proxy's %s contains a token", what)
			}
		}
	}
}

// dial logs in as user with token as the password, over TLS
// (sslmode=verify-full) or plain TCP. The password is set on the parsed
// config, so a token never goes through URL escaping.
func (e *idpEnv) dial(user, token string, tlsOn bool) (*pgx.Conn, error) {
	mode := "verify-full&sslrootcert=" + e.cert
	if !tlsOn {
		mode = "disable"
	}
	cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://%s@%s/%s?sslmode=%s", user, e.proxy.addr, idpDB, mode))
	if err != nil {
		return nil, err
	}
	cfg.Password = token
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return pgx.ConnectConfig(ctx, cfg)
}

func (e *idpEnv) mustConnect(t *testing.T, user, token string) *pgx.Conn {
	t.Helper()
	conn, err := e.dial(user, token, true)
	if err != nil {
		t.Fatalf("token login as %s: %v\n%s", user, err, e.proxy.log())
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func (e *idpEnv) loginError(t *testing.T, user, token string, tlsOn bool) *pgconn.PgError {
	t.Helper()
	conn, err := e.dial(user, token, tlsOn)
	if err == nil {
		conn.Close(context.Background())
		t.Fatalf("login as %s succeeded, want a refusal", user)
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("login as %s: %v, want a server error", user, err)
	}
	if token != "" && (strings.Contains(pe.Message, token) || strings.Contains(pe.Detail, token)) {
		t.Errorf("the error echoes the token: %q", pe.Message)
	}
	return pe
}

func TestJWTLoginGetsTheMasksOfItsRoles(t *testing.T) {
	e := startIdP(t, nil)
	// dave is an analyst (a realm role): last four digits.
	analyst := e.token(t, testidp.Token{User: "dave", RealmRoles: []string{"analyst"}, Groups: []string{"analysts"}})
	conn := e.mustConnect(t, "dave", analyst)
	equalLines(t, "analyst", rows(t, conn, "SELECT id, ssn FROM idp.accounts ORDER BY id"), []string{"1|xxx-xx-1111", "2|xxx-xx-2222"})
	// The session's identity inside SQL is the token's user, in the
	// database the client asked for, with the schema its search_path names.
	equalLines(t, "session functions", rows(t, conn, "SELECT current_user, session_user, user, current_role, current_database(), current_schema()"),
		[]string{"dave|dave|dave|dave|idpdb|public"})
	rows(t, conn, "SET search_path = idp, public")
	equalLines(t, "current_schema after SET", rows(t, conn, "SELECT current_schema(), current_schemas(false)::text"), []string{"idp|{idp,public}"})
	equalLines(t, "is_role_in_session", rows(t, conn, "SELECT is_role_in_session('analyst'), is_role_in_session('auditor')"), []string{"t|f"})
	equalLines(t, "roles and groups", rows(t, conn, "SELECT current_available_roles()::text, current_user_groups()::text, current_groups()::text"),
		[]string{"{analyst,default-roles-acme,offline_access,uma_authorization}|{analysts}|{analysts}"})

	// A new token for the same user with another role: other masks. Here
	// the role is a client role (resource_access.pgranger.roles).
	auditor := e.token(t, testidp.Token{User: "dave", ClientRoles: []string{"auditor"}})
	conn2 := e.mustConnect(t, "dave", auditor)
	equalLines(t, "auditor", rows(t, conn2, "SELECT id, ssn FROM idp.accounts ORDER BY id"), []string{"1|111-11-1111", "2|222-22-2222"})
	// Neither role: the public mask.
	support := e.token(t, testidp.Token{User: "dave", RealmRoles: []string{"support"}})
	conn3 := e.mustConnect(t, "dave", support)
	equalLines(t, "support", rows(t, conn3, "SELECT id, ssn FROM idp.accounts ORDER BY id"), []string{"1|NULL", "2|NULL"})
	// No role that grants access: denied.
	none := e.token(t, testidp.Token{User: "dave"})
	conn4 := e.mustConnect(t, "dave", none)
	if _, err := tryRows(conn4, "SELECT id FROM idp.accounts"); sqlstate(err) != "42501" {
		t.Errorf("a token without roles: %v, want 42501", err)
	}
	// The first session keeps the roles of its own token.
	equalLines(t, "first session unchanged", rows(t, conn, "SELECT ssn FROM idp.accounts WHERE id = 1"), []string{"xxx-xx-1111"})

	// Audit records carry the user, roles, sub and jti of the token.
	claims := e.iss.Claims(testidp.Token{User: "erin", RealmRoles: []string{"auditor"}})
	tok := e.sign(t, e.key, claims)
	c5 := e.mustConnect(t, "erin", tok)
	rows(t, c5, "SELECT owner FROM idp.accounts WHERE id = 2")
	eventually(t, 5*time.Second, func() string {
		data, _ := os.ReadFile(filepath.Join(e.proxy.dir, "audit.jsonl"))
		for _, line := range strings.Split(string(data), "\n") {
			var r map[string]any
			if json.Unmarshal([]byte(line), &r) != nil || r["reqUser"] != "erin" {
				continue
			}
			roles, _ := r["roles"].([]any)
			hasAuditor := false
			for _, x := range roles {
				hasAuditor = hasAuditor || x == "auditor"
			}
			if r["sub"] != claims["sub"] || r["jti"] != claims["jti"] || r["authMethod"] != "jwt" || !hasAuditor {
				return fmt.Sprintf("erin's record lacks sub/jti/roles: %s", line)
			}
			return ""
		}
		return "no audit record for erin:\n" + string(data)
	})
	if !strings.Contains(e.proxy.log(), fmt.Sprintf("jti=%s", claims["jti"])) {
		t.Errorf("the login log line does not name the token's jti:\n%s", e.proxy.log())
	}
}

func TestJWTHiveRowFilterCurrentUser(t *testing.T) {
	e := startIdP(t, nil)
	for user, want := range map[string][]string{"dave": {"dave|north", "dave|west"}, "erin": {"erin|south"}} {
		conn := e.mustConnect(t, user, e.token(t, testidp.Token{User: user, RealmRoles: []string{"analyst"}}))
		equalLines(t, user+"'s territory", rows(t, conn, "SELECT region, note FROM idp.territory ORDER BY note"), want)
	}
	// A user attribute from a claim (identity.jwt.attribute-claims) in a
	// ${{USER.region}} filter.
	conn := e.mustConnect(t, "frank", e.token(t, testidp.Token{User: "frank", RealmRoles: []string{"analyst"}, Extra: map[string]any{"region": "EU"}}))
	equalLines(t, "EU branches", rows(t, conn, "SELECT city FROM idp.branches ORDER BY id"), []string{"Lyon", "Turin"})
}

func TestJWTRefusedTokens(t *testing.T) {
	e := startIdP(t, nil)
	forger := testidp.NewRSAKey(t, e.key.ID, jose.RS256) // the real kid, another key
	stranger := testidp.NewRSAKey(t, "not-published", jose.RS256)
	claims := func(user string, extra map[string]any) map[string]any {
		return e.iss.Claims(testidp.Token{User: user, RealmRoles: []string{"auditor"}, Extra: extra})
	}
	now := time.Now()
	cases := []struct {
		name, user, token, code, reason string
	}{
		{"expired", "dave", e.sign(t, e.key, claims("dave", map[string]any{"exp": now.Add(-time.Hour).Unix(), "iat": now.Add(-2 * time.Hour).Unix()})), "28P01", "the token expired at"},
		{"not yet valid", "dave", e.sign(t, e.key, claims("dave", map[string]any{"nbf": now.Add(time.Hour).Unix()})), "28P01", "the token is not valid before"},
		{"wrong issuer", "dave", e.sign(t, e.key, claims("dave", map[string]any{"iss": "https://sso.example.com/realms/acme"})), "28P01", "issuer is not identity.jwt.issuer"},
		{"wrong audience", "dave", e.sign(t, e.key, claims("dave", map[string]any{"aud": []string{"billing"}, "azp": "billing"})), "28P01", `audience is not identity.jwt.audience "pgranger"`},
		{"bad signature", "dave", e.sign(t, forger, claims("dave", nil)), "28P01", "signature does not verify"},
		{"alg none", "dave", e.remember(testidp.Unsigned(t, e.key.ID, claims("dave", nil))), "28P01", `unsigned (alg "none")`},
		{"HS256 with the public key", "dave", e.remember(testidp.HS256(t, e.key.ID, e.key.PublicPEM(), claims("dave", nil))), "28P01", "HMAC algorithm"},
		{"unknown kid", "dave", e.sign(t, stranger, claims("dave", nil)), "28P01", `signing key "not-published" is not in the issuer's key set`},
		{"user mismatch", "erin", e.sign(t, e.key, claims("dave", nil)), "28000", `the token is for user "dave", not the startup user "erin"`},
		{"not a token", "dave", "hunter2", "28P01", "the password is not a JWT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pe := e.loginError(t, c.user, c.token, true)
			if pe.Code != c.code || !strings.Contains(pe.Message, c.reason) || !strings.Contains(pe.Message, "token authentication failed for user") {
				t.Errorf("%s %q, want %s with %q", pe.Code, pe.Message, c.code, c.reason)
			}
		})
	}

	// Without TLS the token is refused before it is even asked for.
	good := e.token(t, testidp.Token{User: "dave", RealmRoles: []string{"auditor"}})
	pe := e.loginError(t, "dave", good, false)
	if pe.Code != "28000" || !strings.Contains(pe.Message, "needs a TLS connection") {
		t.Errorf("plaintext: %s %q", pe.Code, pe.Message)
	}
	if msg := firstReply(t, e.proxy.addr, "dave"); msg != 'E' {
		t.Errorf("plaintext startup was answered with %q, want an ErrorResponse before any authentication request", msg)
	}

	// Key rotation: a token signed with a newly published key works once
	// the JWKS is fetched again (jwks-min-refresh-secs = 1 here).
	k2 := testidp.NewRSAKey(t, "rsa-2026-02", jose.RS256)
	e.iss.Publish(e.key, k2)
	tok2 := e.sign(t, k2, claims("dave", nil))
	eventually(t, 5*time.Second, func() string {
		conn, err := e.dial("dave", tok2, true)
		if err != nil {
			return "rotated key: " + err.Error()
		}
		conn.Close(context.Background())
		return ""
	})
}

// firstReply sends a plaintext startup message for user and returns the
// type of the first message the proxy answers with.
func firstReply(t *testing.T, addr, user string) byte {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := bin.BigEndian.AppendUint32(nil, 3<<16)
	for _, kv := range []string{"user", user, "database", idpDB} {
		body = append(append(body, kv...), 0)
	}
	body = append(body, 0)
	c.Write(append(bin.BigEndian.AppendUint32(nil, uint32(len(body)+4)), body...))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := bufio.NewReader(c).ReadByte()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Combined mode: users of [[identity.users]] keep SCRAM (their password is
// not a token), everyone else logs in with a token; and
// listen.allow-plaintext-password lets a token through without TLS.
func TestJWTAndStaticCombined(t *testing.T) {
	e := startIdP(t, map[string]string{"PGRANGER_LISTEN__ALLOW_PLAINTEXT_PASSWORD": "true"})
	ctx := context.Background()
	bob, err := pgx.Connect(ctx, fmt.Sprintf("postgres://bob:bob@%s/%s?sslmode=disable", e.proxy.addr, idpDB))
	if err != nil {
		t.Fatalf("static user bob with SCRAM: %v", err)
	}
	defer bob.Close(ctx)
	// bob's roles come from the config (analyst): last four digits.
	equalLines(t, "bob", rows(t, bob, "SELECT current_user, ssn FROM idp.accounts WHERE id = 1"), []string{"bob|xxx-xx-1111"})
	// A token for bob does not replace his password: bob is a SCRAM user.
	bobToken := e.token(t, testidp.Token{User: "bob", RealmRoles: []string{"auditor"}})
	if pe := e.loginError(t, "bob", bobToken, true); pe.Code != "28P01" {
		t.Errorf("a token as bob's SCRAM password: %s %q, want 28P01", pe.Code, pe.Message)
	}
	// With allow-plaintext-password, a token works without TLS.
	tok := e.token(t, testidp.Token{User: "dave", RealmRoles: []string{"analyst"}})
	conn, err := e.dial("dave", tok, false)
	if err != nil {
		t.Fatalf("token over plain TCP with allow-plaintext-password: %v", err)
	}
	defer conn.Close(ctx)
	equalLines(t, "dave without TLS", rows(t, conn, "SELECT ssn FROM idp.accounts WHERE id = 2"), []string{"xxx-xx-2222"})

	// Protocol failures after the password request: a password message
	// beyond 64 KiB, and another message in its place.
	big := append([]byte(strings.Repeat("a", 70<<10)), 0)
	if code := rawTokenLogin(t, e.proxy.addr, 'p', big); code != "28P01" {
		t.Errorf("oversized password message: SQLSTATE %q, want 28P01", code)
	}
	if code := rawTokenLogin(t, e.proxy.addr, 'Q', []byte("SELECT 1\x00")); code != "08P01" {
		t.Errorf("a query instead of the password: SQLSTATE %q, want 08P01", code)
	}
}

// rawTokenLogin starts a plaintext session for dave, expects the
// cleartext password request, answers with a message of type typ and
// returns the SQLSTATE of the error that follows.
func rawTokenLogin(t *testing.T, addr string, typ byte, body []byte) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	startup := bin.BigEndian.AppendUint32(nil, 3<<16)
	for _, kv := range []string{"user", "dave", "database", idpDB} {
		startup = append(append(startup, kv...), 0)
	}
	startup = append(startup, 0)
	c.Write(append(bin.BigEndian.AppendUint32(nil, uint32(len(startup)+4)), startup...))
	r := bufio.NewReader(c)
	read := func() (byte, []byte) {
		var hdr [5]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			t.Fatalf("reading: %v", err)
		}
		b := make([]byte, bin.BigEndian.Uint32(hdr[1:])-4)
		if _, err := io.ReadFull(r, b); err != nil {
			t.Fatalf("reading: %v", err)
		}
		return hdr[0], b
	}
	if mt, b := read(); mt != 'R' || bin.BigEndian.Uint32(b) != 3 {
		t.Fatalf("want AuthenticationCleartextPassword, got %q %v", mt, b)
	}
	c.Write(append(append([]byte{typ}, bin.BigEndian.AppendUint32(nil, uint32(len(body)+4))...), body...))
	mt, b := read()
	if mt != 'E' {
		t.Fatalf("want an ErrorResponse, got %q", mt)
	}
	var er pgproto3.ErrorResponse
	if err := er.Decode(b); err != nil {
		t.Fatal(err)
	}
	return er.Code
}

// An issuer that cannot be reached: logins fail with 28000 naming it,
// pgranger keeps running, and once the issuer answers logins work.
func TestJWTIssuerUnavailable(t *testing.T) {
	idpFixtures(t)
	key := testidp.NewRSAKey(t, "k1", jose.RS256)
	iss := testidp.New(t, "acme", false, key)
	iss.Down.Store(true)
	cert, keyFile := writeSelfSigned(t, t.TempDir())
	p := startProxy(t, proxyOptions{policies: idpPolicies(t), env: map[string]string{
		"PGRANGER_IDENTITY__MODE":                       "jwt",
		"PGRANGER_IDENTITY__JWT__ISSUER":                iss.URL,
		"PGRANGER_IDENTITY__JWT__AUDIENCE":              "pgranger",
		"PGRANGER_IDENTITY__JWT__JWKS_MIN_REFRESH_SECS": "1",
		"PGRANGER_LISTEN__TLS_CERT":                     cert,
		"PGRANGER_LISTEN__TLS_KEY":                      keyFile,
	}})
	e := &idpEnv{iss: iss, key: key, proxy: p, cert: cert}
	tok := e.token(t, testidp.Token{User: "dave", RealmRoles: []string{"analyst"}, Lifetime: time.Hour})
	pe := e.loginError(t, "dave", tok, true)
	if pe.Code != "28000" || !strings.Contains(pe.Message, "the issuer's signing keys could not be fetched") {
		t.Errorf("issuer down: %s %q, want 28000", pe.Code, pe.Message)
	}
	if !strings.Contains(p.log(), "identity.jwt: the issuer's signing keys could not be fetched") {
		t.Errorf("no start-up warning about the issuer:\n%s", p.log())
	}
	iss.Down.Store(false)
	eventually(t, 5*time.Second, func() string {
		conn, err := e.dial("dave", tok, true)
		if err != nil {
			return "issuer back up: " + err.Error()
		}
		conn.Close(context.Background())
		return ""
	})
	e.checkNoTokenLeak(t)
}

// psql passes the token as PGPASSWORD and JDBC as password= in the URL, over TLS.
func TestJWTPsqlAndJDBC(t *testing.T) {
	path, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("skipping: psql not installed (make test installs postgresql-client)")
	}
	e := startIdP(t, nil)
	host, port, _ := net.SplitHostPort(e.proxy.addr)
	run := func(sslmode, token string, args ...string) (string, string, error) {
		conninfo := fmt.Sprintf("host=%s port=%s dbname=%s user=dave sslmode=%s sslrootcert=%s", host, port, idpDB, sslmode, e.cert)
		cmd := exec.Command(path, append([]string{"-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", conninfo}, args...)...)
		cmd.Env = append(os.Environ(), "PGPASSWORD="+token, "PGCONNECT_TIMEOUT=10", "LC_ALL=C")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return strings.TrimSpace(stdout.String()), stderr.String(), err
	}
	tok := e.token(t, testidp.Token{User: "dave", RealmRoles: []string{"analyst"}})
	out, errOut, err := run("verify-full", tok, "-c", "SELECT current_user, ssn FROM idp.accounts ORDER BY id")
	if err != nil || out != "dave|xxx-xx-1111\ndave|xxx-xx-2222" {
		t.Errorf("psql with a token: %v %q\n%s", err, out, errOut)
	}
	expired := e.sign(t, e.key, e.iss.Claims(testidp.Token{User: "dave", Extra: map[string]any{"exp": time.Now().Add(-time.Hour).Unix()}}))
	_, errOut, err = run("verify-full", expired, "-c", "SELECT 1")
	if err == nil || !strings.Contains(errOut, "token authentication failed for user \"dave\": the token expired at") || strings.Contains(errOut, expired) {
		t.Errorf("psql with an expired token: %v %q", err, errOut)
	}
	_, errOut, err = run("disable", tok, "-c", "SELECT 1")
	if err == nil || !strings.Contains(errOut, "needs a TLS connection") {
		t.Errorf("psql without TLS: %v %q", err, errOut)
	}

	// JDBC takes the token as password= in the URL.
	t.Run("jdbc", func(t *testing.T) {
		java, cp := jdbcProgram(t)
		url := fmt.Sprintf("jdbc:postgresql://%s/%s?user=dave&password=%s&sslmode=verify-full&sslrootcert=%s", e.proxy.addr, idpDB, tok, e.cert)
		run := runClient(t, time.Minute, "", nil, java, "-cp", cp, "ClientCheck", "query", url, "SELECT current_user || ' ' || ssn FROM idp.accounts WHERE id = 2")
		if run.err != nil {
			t.Fatalf("%v\n%s%s", run.err, run.stdout, run.stderr)
		}
		expectLines(t, "JDBC with a token", run, []string{"query: dave xxx-xx-2222"})
	})
}

// A session ends with a FATAL error when its token expires — in the middle
// of a statement, idle, or in psql — and its backend connection goes back
// to the pool clean: the pool has one connection, and each session after
// the first gets it.
func TestJWTSessionEndsWhenTheTokenExpires(t *testing.T) {
	t.Parallel() // its own proxy; mostly waits for tokens to expire
	e := startIdP(t, map[string]string{
		"PGRANGER_IDENTITY__JWT__CLOCK_SKEW_SECS":   "0",
		"PGRANGER_IDENTITY__JWT__EXPIRY_GRACE_SECS": "0",
		"PGRANGER_BACKEND__POOL_SIZE":               "1",
		"PGRANGER_BACKEND__ACQUIRE_TIMEOUT_SECS":    "5",
	})
	// The proxy runs on the wall clock, so the tokens are as short as
	// the whole-second "exp" claim allows while leaving a login and a
	// first statement time to finish on a busy machine: exp is the first
	// whole second at least 1.5 s away (1.5 to 2.5 s), with no skew and
	// no grace.
	shortToken := func() string {
		exp := time.Now().Add(1500*time.Millisecond + time.Second - time.Nanosecond).Unix()
		return e.sign(t, e.key, e.iss.Claims(testidp.Token{User: "dave", RealmRoles: []string{"analyst"}, Extra: map[string]any{"exp": exp}}))
	}
	expectExpired := func(what string, err error) {
		t.Helper()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "28000" || pe.Severity != "FATAL" || !strings.Contains(pe.Message, "the session's token expired at") {
			t.Errorf("%s: %v, want FATAL 28000 naming the expired token", what, err)
		}
	}

	// 1. In the middle of a long statement.
	conn := e.mustConnect(t, "dave", shortToken())
	equalLines(t, "before expiry", rows(t, conn, "SELECT ssn FROM idp.accounts WHERE id = 1"), []string{"xxx-xx-1111"})
	start := time.Now()
	_, err := tryRows(conn, "SELECT pg_sleep(20)")
	expectExpired("mid-statement", err)
	if d := time.Since(start); d > 6*time.Second {
		t.Errorf("the session outlived its token by %s", d)
	}
	// The backend stopped the statement.
	eventually(t, 10*time.Second, func() string {
		var n int
		sc, err := pgx.Connect(context.Background(), cluster.SuperDSN(idpDB))
		if err != nil {
			return err.Error()
		}
		defer sc.Close(context.Background())
		sc.QueryRow(context.Background(), "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(20)%' AND state = 'active' AND pid <> pg_backend_pid()").Scan(&n)
		if n != 0 {
			return "the expired session's statement still runs on the backend"
		}
		return ""
	})

	// 2. Idle: the FATAL error arrives unprompted.
	conn2 := e.mustConnect(t, "dave", shortToken())
	equalLines(t, "second session got the pooled connection", rows(t, conn2, "SELECT current_user"), []string{"dave"})
	wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	expectExpired("idle", conn2.PgConn().WaitForNotification(wctx))

	// 3. psql sees the error too.
	if path, err := exec.LookPath("psql"); err == nil {
		host, port, _ := net.SplitHostPort(e.proxy.addr)
		cmd := exec.Command(path, "-X", "-A", "-t", fmt.Sprintf("host=%s port=%s dbname=%s user=dave sslmode=require", host, port, idpDB), "-c", "SELECT pg_sleep(20)")
		cmd.Env = append(os.Environ(), "PGPASSWORD="+shortToken(), "PGCONNECT_TIMEOUT=10", "LC_ALL=C")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "FATAL:  pgranger: the session's token expired at") {
			t.Errorf("psql: %v\n%s", err, out)
		}
	}

	// The single backend connection is free again for a new login.
	conn4 := e.mustConnect(t, "dave", e.token(t, testidp.Token{User: "dave", RealmRoles: []string{"analyst"}}))
	equalLines(t, "after the expired sessions", rows(t, conn4, "SELECT count(*) FROM idp.accounts"), []string{"2"})
	if !strings.Contains(e.proxy.log(), "session ended: token expired") {
		t.Errorf("no log line for the expired session:\n%s", e.proxy.log())
	}
}
