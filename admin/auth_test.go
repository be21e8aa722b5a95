package admin

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pgranger/pgranger/ranger"
)

func TestBearerToken(t *testing.T) {
	token := "s3cret-token"
	h, err := NewHandler(Options{
		Policy:  func() PolicyStatus { return PolicyStatus{Available: true, LastSuccess: time.Now()} },
		Refresh: func(ctx context.Context) (ranger.Report, error) { return ranger.Report{Source: "file"}, nil },
		Token:   func() string { return token },
	})
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path, auth string) int {
		req := httptest.NewRequest(method, path, nil)
		req.RemoteAddr = "127.0.0.1:5555"
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	for _, c := range []struct {
		method, path, auth string
		want               int
	}{
		{"GET", "/metrics", "", 401},
		{"GET", "/metrics", "Bearer wrong", 401},
		{"GET", "/metrics", "Bearer s3cret-token-and-more", 401},
		{"GET", "/metrics", "Basic s3cret-token", 401},
		{"GET", "/metrics", "Bearer s3cret-token", 200},
		{"POST", "/refresh", "", 401},
		{"POST", "/refresh", "Bearer s3cret-token", 200},
		{"GET", "/healthz", "", 200},
		{"GET", "/readyz", "", 200},
	} {
		if got := do(c.method, c.path, c.auth); got != c.want {
			t.Errorf("%s %s with %q: %d, want %d", c.method, c.path, c.auth, got, c.want)
		}
	}
	token = "" // the token function is asked per request (a reload may clear it)
	if got := do("GET", "/metrics", ""); got != 200 {
		t.Errorf("metrics without a configured token: %d", got)
	}
}

func TestReadyzChecksTheBackend(t *testing.T) {
	var backendErr error
	h, _ := NewHandler(Options{
		Policy: func() PolicyStatus {
			return PolicyStatus{Source: "file", Available: true, PolicyVersion: 3, LastSuccess: time.Now()}
		},
		Backend: func(ctx context.Context) error { return backendErr },
	})
	if code, _ := get(t, h, "GET", "/readyz"); code != 200 {
		t.Errorf("readyz with a reachable backend: %d", code)
	}
	backendErr = errors.New("connection refused")
	if code, body := get(t, h, "GET", "/readyz"); code != 503 || body != "not ready: the backend is unreachable (connection refused)\n" {
		t.Errorf("readyz with an unreachable backend: %d %q", code, body)
	}
}

func TestStartServesTLS(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := Start(ctx, Options{Addr: "127.0.0.1:0", Policy: func() PolicyStatus { return PolicyStatus{} },
		TLS: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}}}})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 5 * time.Second}
	resp, err := c.Get("https://" + srv.Addr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok\n" {
		t.Errorf("healthz over TLS: %d %q", resp.StatusCode, body)
	}
	if _, err := http.Get("http://" + srv.Addr() + "/healthz"); err == nil {
		// Go's TLS server answers a plain HTTP request with a 400 page;
		// what matters is that nothing is served in the clear.
		resp, _ := http.Get("http://" + srv.Addr() + "/healthz")
		if resp != nil && resp.StatusCode == 200 {
			t.Error("the TLS endpoint answered plain HTTP with 200")
		}
	}
}
