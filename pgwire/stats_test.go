package pgwire

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func writeCert(t *testing.T, dir, name string) (certFile, keyFile string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	return certFile, keyFile
}

func served(t *testing.T, c *tls.Config) string {
	t.Helper()
	cert, err := c.GetCertificate(&tls.ClientHelloInfo{})
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf.Subject.CommonName
}

// A renewed certificate replaces the served one for new handshakes; a
// broken one changes nothing; a server started without TLS cannot get it
// by a reload.
func TestReloadTLS(t *testing.T) {
	dir := t.TempDir()
	c1, k1 := writeCert(t, dir, "first")
	c2, k2 := writeCert(t, dir, "second")
	base, err := LoadTLS(c1, k1)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{}
	cfg := s.obs.reloadableTLS(base)
	if cfg.MinVersion != tls.VersionTLS12 || len(cfg.Certificates) != 0 {
		t.Fatalf("reloadable config: min version %x, %d static certificates", cfg.MinVersion, len(cfg.Certificates))
	}
	if got := served(t, cfg); got != "first" {
		t.Fatalf("serves %s", got)
	}
	if err := s.ReloadTLS(c2, k2); err != nil {
		t.Fatal(err)
	}
	if got := served(t, cfg); got != "second" {
		t.Errorf("after the reload: serves %s", got)
	}
	if err := s.ReloadTLS(c1, k2); err == nil {
		t.Error("a mismatched key pair was accepted")
	}
	if got := served(t, cfg); got != "second" {
		t.Errorf("after a failed reload: serves %s", got)
	}
	if err := (&Server{}).ReloadTLS(c1, k1); err == nil || err.Error() != "the server was started without listen.tls-cert; enabling TLS needs a restart" {
		t.Errorf("reload without TLS at start: %v", err)
	}
}

func TestTagRows(t *testing.T) {
	for tag, want := range map[string]int64{"SELECT 3": 3, "INSERT 0 12": 12, "UPDATE 0": 0, "COPY 5": 5, "BEGIN": 0, "SET": 0,
		"CREATE TABLE": 0, "FETCH 7": 7, "MERGE 2": 2, "SELECT 9223372036854775807": 9223372036854775807,
		"SELECT 9223372036854775808": 0, "SELECT ": 0, "SELECT 1x": 0} {
		if got := tagRows([]byte(tag)); got != want {
			t.Errorf("tagRows(%q) = %d, want %d", tag, got, want)
		}
	}
}

func TestHistogramSnapshot(t *testing.T) {
	var h histogram
	bounds := []float64{0.001, 0.01}
	for _, d := range []time.Duration{500 * time.Microsecond, time.Millisecond, 5 * time.Millisecond, time.Second} {
		h.observe(bounds, d)
	}
	s := h.snapshot(bounds)
	if s.Count != 4 || s.Buckets[0.001] != 2 || s.Buckets[0.01] != 3 {
		t.Errorf("snapshot %+v", s)
	}
	if want := 0.0005 + 0.001 + 0.005 + 1; s.Sum < want-1e-9 || s.Sum > want+1e-9 {
		t.Errorf("sum %v, want %v", s.Sum, want)
	}
}
