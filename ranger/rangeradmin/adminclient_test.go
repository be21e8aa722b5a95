package rangeradmin_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgranger/pgranger/ranger/rangeradmin"
	"github.com/pgranger/pgranger/ranger/rangertest"
)

const (
	svc      = "cm_hive"
	user     = "pgranger"
	password = "s3cr3t-Pa55"
)

func policiesDoc(version int) []byte {
	return []byte(`{"serviceName":"cm_hive","policyVersion":` + itoa(version) + `,"policies":[{"id":1,"name":"p","resources":{"database":{"values":["*"]}}}]}`)
}

func itoa(n int) string { return big.NewInt(int64(n)).String() }

func newServer(t *testing.T) *rangertest.Server {
	t.Helper()
	s, err := rangertest.New(svc, user, password)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	s.SetDocument(rangeradmin.DocPolicies, policiesDoc(7))
	s.SetDocument(rangeradmin.DocTags, []byte(`{"serviceName":"cm_hive","tagVersion":3}`))
	s.SetDocument(rangeradmin.DocRoles, []byte(`{"serviceName":"cm_hive","roleVersion":4,"rangerRoles":[{"name":"r","users":[{"name":"bob"}]}]}`))
	s.SetDocument(rangeradmin.DocUserStore, []byte(`{"userStoreVersion":5,"userAttrMapping":{"bob":{"region":"US"}}}`))
	return s
}

func newClient(t *testing.T, mod func(*rangeradmin.AdminClientConfig), urls ...string) *rangeradmin.AdminClient {
	t.Helper()
	cfg := rangeradmin.AdminClientConfig{
		URLs: urls, User: user, Password: func() (string, error) { return password, nil },
		ServiceName: svc, ClusterName: "prod", Timeout: 2 * time.Second,
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := rangeradmin.NewAdminClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func noPassword(t *testing.T, r rangeradmin.FetchResult) {
	t.Helper()
	if r.Err != nil && strings.Contains(r.Err.Error(), password) {
		t.Errorf("the error repeats the password: %v", r.Err)
	}
}

func TestFetchPathsParametersAndVersions(t *testing.T) {
	s := newServer(t)
	c := newClient(t, func(c *rangeradmin.AdminClientConfig) { c.PluginID = "pgranger@host-cm_hive" }, s.URL()+"/")
	ctx := context.Background()
	act := time.UnixMilli(1700000000123)

	want := map[rangeradmin.Document]struct {
		version int64
		param   string
	}{
		rangeradmin.DocPolicies:  {7, "lastKnownVersion"},
		rangeradmin.DocTags:      {3, "lastKnownVersion"},
		rangeradmin.DocRoles:     {4, "lastKnownRoleVersion"},
		rangeradmin.DocUserStore: {5, "lastKnownUserStoreVersion"},
	}
	for doc, w := range want {
		r := c.Fetch(ctx, doc, -1, act)
		if r.Outcome != rangeradmin.Updated || r.Status != "200" || r.Version != w.version || r.Parsed == nil || len(r.Body) == 0 {
			t.Errorf("%s: %+v", doc, r)
		}
		q := s.LastQuery(doc)
		if q.Get(w.param) != "-1" || q.Get("lastActivationTime") != "1700000000123" || q.Get("pluginId") != "pgranger@host-cm_hive" || q.Get("clusterName") != "prod" {
			t.Errorf("%s: query %v", doc, q)
		}
		if s.LastUser(doc) != user {
			t.Errorf("%s: basic auth user %q", doc, s.LastUser(doc))
		}
		// The version the plugin has is current: 304, nothing to replace.
		if r := c.Fetch(ctx, doc, w.version, act); r.Outcome != rangeradmin.NotModified || r.Status != "304" {
			t.Errorf("%s at its version: %+v", doc, r)
		}
	}
	if q := s.LastQuery(rangeradmin.DocPolicies); q.Get("supportsPolicyDeltas") != "false" {
		t.Errorf("policies must ask for no deltas: %v", q)
	}
	if q := s.LastQuery(rangeradmin.DocTags); q.Get("supportsTagDeltas") != "false" {
		t.Errorf("tags must ask for no deltas: %v", q)
	}
	if got := c.RequestURL("http://h", rangeradmin.DocTags, 2, time.Time{}); !strings.HasPrefix(got, "http://h/service/tags/secure/download/cm_hive?") || !strings.Contains(got, "lastActivationTime=0") {
		t.Errorf("tags URL %s", got)
	}
	if got := c.RequestURL("http://h", rangeradmin.DocUserStore, 2, time.Time{}); !strings.HasPrefix(got, "http://h/service/xusers/secure/download/cm_hive?") {
		t.Errorf("user store URL %s", got)
	}
	s.NotModifiedStatus(http.StatusNoContent)
	if r := c.Fetch(ctx, rangeradmin.DocPolicies, 7, act); r.Outcome != rangeradmin.NotModified || r.Status != "204" {
		t.Errorf("204 must mean unchanged: %+v", r)
	}
}

func TestFetchFailures(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	c := newClient(t, nil, s.URL())

	s.SetCredentials(user, "rotated")
	r := c.Fetch(ctx, rangeradmin.DocPolicies, -1, time.Time{})
	if r.Outcome != rangeradmin.Failed || r.Status != "401" || !strings.Contains(r.Err.Error(), "did not accept the credentials") || !strings.Contains(r.Err.Error(), "Authentication Failed") {
		t.Errorf("wrong password: %+v", r)
	}
	noPassword(t, r)
	s.SetCredentials(user, password)

	s.SetDownloadUsers("someone-else")
	r = c.Fetch(ctx, rangeradmin.DocPolicies, -1, time.Time{})
	if r.Outcome != rangeradmin.Failed || r.Status != "403" || !strings.Contains(r.Err.Error(), "policy.download.auth.users") || !strings.Contains(r.Err.Error(), "is not allowed to download") {
		t.Errorf("403: %+v", r)
	}
	if r := c.Fetch(ctx, rangeradmin.DocTags, -1, time.Time{}); r.Status != "403" || !strings.Contains(r.Err.Error(), "tag.download.auth.users") {
		t.Errorf("403 on tags must name tag.download.auth.users: %+v", r)
	}
	s.SetDownloadUsers("*")

	s.ServiceGone(true)
	r = c.Fetch(ctx, rangeradmin.DocPolicies, 7, time.Time{})
	if r.Outcome != rangeradmin.ServiceNotFound || r.Status != "404" || !strings.Contains(r.Err.Error(), rangeradmin.ServiceNotFoundMarker) {
		t.Errorf("404 service not found: %+v", r)
	}
	s.ServiceGone(false)

	s.Fail(rangeradmin.DocPolicies, 400, `{"statusCode":1,"msgDesc":"Unauthorized access - unable to get client certificate"}`)
	r = c.Fetch(ctx, rangeradmin.DocPolicies, -1, time.Time{})
	if r.Outcome != rangeradmin.Failed || r.Status != "400" || !strings.Contains(r.Err.Error(), "Ranger says: Unauthorized access - unable to get client certificate") {
		t.Errorf("400: %+v", r)
	}
	s.Fail(rangeradmin.DocPolicies, 404, `<html>Not Found</html>`)
	if r := c.Fetch(ctx, rangeradmin.DocPolicies, -1, time.Time{}); r.Outcome != rangeradmin.Failed || r.Status != "404" || !strings.Contains(r.Err.Error(), "without RANGER_ERROR_SERVICE_NOT_FOUND") {
		t.Errorf("a 404 that is not Ranger's is a failure: %+v", r)
	}
	s.Fail(rangeradmin.DocPolicies, 302, "")
	if r := c.Fetch(ctx, rangeradmin.DocPolicies, -1, time.Time{}); r.Outcome != rangeradmin.Failed || !strings.Contains(r.Err.Error(), "redirect") {
		t.Errorf("a redirect is a failure, not followed: %+v", r)
	}
	s.Fail(rangeradmin.DocPolicies, 0, "")

	s.Garbage(rangeradmin.DocPolicies, true)
	r = c.Fetch(ctx, rangeradmin.DocPolicies, -1, time.Time{})
	if r.Outcome != rangeradmin.Failed || r.Status != rangeradmin.StatusInvalidDocument || !strings.Contains(r.Err.Error(), "not JSON") {
		t.Errorf("garbage: %+v", r)
	}
	s.Garbage(rangeradmin.DocPolicies, false)

	s.SetDocument(rangeradmin.DocPolicies, []byte(`{"serviceName":"other_hive","policyVersion":9}`))
	if r := c.Fetch(ctx, rangeradmin.DocPolicies, -1, time.Time{}); r.Outcome != rangeradmin.Failed || !strings.Contains(r.Err.Error(), `service "other_hive"`) {
		t.Errorf("another service's policies: %+v", r)
	}
	s.SetDocument(rangeradmin.DocTags, []byte(`{"serviceName":"cm_hive","tagVersion":9,"isDelta":true}`))
	if r := c.Fetch(ctx, rangeradmin.DocTags, -1, time.Time{}); r.Outcome != rangeradmin.Failed || !strings.Contains(r.Err.Error(), "delta") {
		t.Errorf("a tag delta: %+v", r)
	}

	s.Hang()
	fast := newClient(t, func(c *rangeradmin.AdminClientConfig) { c.Timeout = 300 * time.Millisecond }, s.URL())
	start := time.Now()
	r = fast.Fetch(ctx, rangeradmin.DocRoles, -1, time.Time{})
	if r.Outcome != rangeradmin.Failed || r.Status != rangeradmin.StatusTransportError || time.Since(start) > 2*time.Second {
		t.Errorf("hanging admin: %+v after %s", r, time.Since(start))
	}
	s.Release()

	s.Stop()
	r = c.Fetch(ctx, rangeradmin.DocPolicies, -1, time.Time{})
	if r.Outcome != rangeradmin.Failed || r.Status != rangeradmin.StatusTransportError || !strings.Contains(r.Err.Error(), "refused") {
		t.Errorf("stopped admin: %+v", r)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if r := c.Fetch(ctx, rangeradmin.DocRoles, -1, time.Time{}); r.Outcome != rangeradmin.Updated {
		t.Errorf("restarted admin: %+v", r)
	}

	bad := newClient(t, func(c *rangeradmin.AdminClientConfig) {
		c.Password = func() (string, error) { return "", os.ErrPermission }
	}, s.URL())
	if r := bad.Fetch(ctx, rangeradmin.DocPolicies, -1, time.Time{}); r.Outcome != rangeradmin.Failed || r.Status != rangeradmin.StatusPasswordError {
		t.Errorf("unreadable password: %+v", r)
	}
}

func TestPlainPathsAreRefusedByTheTestServer(t *testing.T) {
	s := newServer(t)
	resp, err := http.Get(s.URL() + "/service/plugins/policies/download/" + svc)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("plain download path: %d, want 400 as Ranger 2.9+", resp.StatusCode)
	}
}

func TestFailoverInOrder(t *testing.T) {
	good := newServer(t)
	down := newServer(t)
	down.Stop()
	broken := newServer(t)
	broken.FailAll(503, "maintenance")
	denying := newServer(t)
	denying.SetCredentials(user, "other")
	ctx := context.Background()

	c := newClient(t, nil, down.URL(), broken.URL(), good.URL())
	r := c.Fetch(ctx, rangeradmin.DocPolicies, -1, time.Time{})
	if r.Outcome != rangeradmin.Updated || r.URL != good.URL() {
		t.Errorf("failover past a dead and a 503 admin: %+v", r)
	}
	if broken.Requests(rangeradmin.DocPolicies) != 1 {
		t.Errorf("the 503 admin was asked %d times", broken.Requests(rangeradmin.DocPolicies))
	}
	// The first admin that answers wins, even with a no.
	c = newClient(t, nil, denying.URL(), good.URL())
	before := good.Requests(rangeradmin.DocPolicies)
	if r := c.Fetch(ctx, rangeradmin.DocPolicies, -1, time.Time{}); r.Status != "401" || r.URL != denying.URL() || good.Requests(rangeradmin.DocPolicies) != before {
		t.Errorf("a 401 is Ranger's answer, not a reason to fail over: %+v", r)
	}
	// Order is kept: the first admin is preferred again once it answers.
	c = newClient(t, nil, good.URL(), down.URL())
	if r := c.Fetch(ctx, rangeradmin.DocPolicies, -1, time.Time{}); r.URL != good.URL() {
		t.Errorf("first URL not used first: %+v", r)
	}
	// All down: the last failure is reported.
	c = newClient(t, nil, down.URL(), broken.URL())
	if r := c.Fetch(ctx, rangeradmin.DocPolicies, -1, time.Time{}); r.Outcome != rangeradmin.Failed || r.Status != "503" {
		t.Errorf("all admins failing: %+v", r)
	}
}

type pki struct {
	caPEM              []byte
	ca                 *x509.Certificate
	caKey              *ecdsa.PrivateKey
	serverCert, client tls.Certificate
	clientCertPEM      []byte
	clientKeyPEM       []byte
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	p := &pki{}
	var err error
	p.caKey, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &p.caKey.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	p.ca, _ = x509.ParseCertificate(caDER)
	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	issue := func(serial int64, cn string, usage x509.ExtKeyUsage, ips []net.IP) (tls.Certificate, []byte, []byte) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn}, NotBefore: time.Now().Add(-time.Hour),
			NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips, KeyUsage: x509.KeyUsageDigitalSignature}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, _ := x509.MarshalECPrivateKey(key)
		certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
		keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
		c, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		return c, certPEM, keyPEM
	}
	p.serverCert, _, _ = issue(2, "ranger", x509.ExtKeyUsageServerAuth, []net.IP{net.ParseIP("127.0.0.1")})
	p.client, p.clientCertPEM, p.clientKeyPEM = issue(3, "pgranger", x509.ExtKeyUsageClientAuth, nil)
	return p
}

func TestTLS(t *testing.T) {
	rs := newServer(t)
	p := newPKI(t)
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	caFile := write("ca.pem", p.caPEM)
	certFile, keyFile := write("client.pem", p.clientCertPEM), write("client.key", p.clientKeyPEM)

	ts := httptest.NewUnstartedServer(rs.Handler())
	pool := x509.NewCertPool()
	pool.AddCert(p.ca)
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{p.serverCert}, ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: pool}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	ctx := context.Background()

	// System roots do not know the test CA.
	c := newClient(t, nil, ts.URL)
	if r := c.Fetch(ctx, rangeradmin.DocPolicies, -1, time.Time{}); r.Outcome != rangeradmin.Failed || r.Status != rangeradmin.StatusTransportError || !strings.Contains(r.Err.Error(), "certificate") {
		t.Errorf("unknown CA: %+v", r)
	}
	c = newClient(t, func(c *rangeradmin.AdminClientConfig) { c.CAFile = caFile }, ts.URL)
	if r := c.Fetch(ctx, rangeradmin.DocPolicies, -1, time.Time{}); r.Outcome != rangeradmin.Updated {
		t.Errorf("ca-file: %+v", r)
	}
	c = newClient(t, func(c *rangeradmin.AdminClientConfig) { c.AcceptInvalidCerts = true }, ts.URL)
	if r := c.Fetch(ctx, rangeradmin.DocPolicies, -1, time.Time{}); r.Outcome != rangeradmin.Updated {
		t.Errorf("accept-invalid-certs: %+v", r)
	}

	// Mutual TLS: the admin requires a client certificate.
	ts.TLS.ClientAuth = tls.RequireAndVerifyClientCert
	ts.CloseClientConnections()
	c = newClient(t, func(c *rangeradmin.AdminClientConfig) { c.CAFile = caFile }, ts.URL)
	if r := c.Fetch(ctx, rangeradmin.DocPolicies, -1, time.Time{}); r.Outcome != rangeradmin.Failed {
		t.Errorf("no client certificate must fail: %+v", r)
	}
	c = newClient(t, func(c *rangeradmin.AdminClientConfig) {
		c.CAFile, c.ClientCert, c.ClientKey = caFile, certFile, keyFile
	}, ts.URL)
	if r := c.Fetch(ctx, rangeradmin.DocPolicies, -1, time.Time{}); r.Outcome != rangeradmin.Updated {
		t.Errorf("client certificate: %+v", r)
	}

	if _, err := rangeradmin.NewAdminClient(rangeradmin.AdminClientConfig{URLs: []string{ts.URL}, ServiceName: svc, Password: func() (string, error) { return "", nil },
		CAFile: write("empty.pem", []byte("nothing"))}); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("a ca-file without certificates: %v", err)
	}
	if _, err := rangeradmin.NewAdminClient(rangeradmin.AdminClientConfig{URLs: []string{ts.URL}, ServiceName: svc, Password: func() (string, error) { return "", nil },
		ClientCert: certFile, ClientKey: caFile}); err == nil || !strings.Contains(err.Error(), "client-cert") {
		t.Errorf("a bad client key: %v", err)
	}
}

func TestPasswordFromFileIsReread(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(path, []byte("one\n"), 0o600)
	pw := rangeradmin.PasswordFromFile(path)
	if got, err := pw(); got != "one" || err != nil {
		t.Errorf("%q %v", got, err)
	}
	os.WriteFile(path, []byte("two"), 0o600)
	if got, _ := pw(); got != "two" {
		t.Errorf("rotated password not read: %q", got)
	}
	os.WriteFile(path, []byte("\n"), 0o600)
	if _, err := pw(); err == nil {
		t.Error("an empty password file must be an error")
	}
}
