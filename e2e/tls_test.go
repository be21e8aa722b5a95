package e2e

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	bin "encoding/binary"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// writeSelfSigned writes a certificate for 127.0.0.1 and its key.
func writeSelfSigned(t *testing.T, dir string) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pgranger test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	cert, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cert, keyFile
}

func TestClientTLS(t *testing.T) {
	cert, key := writeSelfSigned(t, t.TempDir())
	p := startProxy(t, proxyOptions{env: map[string]string{
		"PGRANGER_LISTEN__TLS_CERT": cert, "PGRANGER_LISTEN__TLS_KEY": key, "PGRANGER_LISTEN__REQUIRE_TLS": "true",
	}})
	ctx := context.Background()
	dsn := strings.Replace(p.dsn("bob", "bob"), "sslmode=disable", "sslmode=verify-full&sslrootcert="+cert, 1)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("TLS connect: %v", err)
	}
	defer conn.Close(ctx)
	tc, ok := conn.PgConn().Conn().(*tls.Conn)
	if !ok || tc.ConnectionState().Version < tls.VersionTLS12 {
		t.Fatalf("connection is not TLS 1.2+: %T", conn.PgConn().Conn())
	}
	equalLines(t, "over TLS", rows(t, conn, "SELECT ssn FROM sales.orders WHERE id = 1"), []string{"xxx-xx-1111"})

	// listen.require-tls: a plaintext login is refused before authentication.
	if _, err := pgx.Connect(ctx, p.dsn("bob", "bob")); sqlstate(err) != "28000" {
		t.Errorf("plaintext with require-tls: %v, want 28000", err)
	}

	// psql negotiates TLS the same way.
	if path, err := exec.LookPath("psql"); err == nil {
		out, err := exec.Command(path, "-X", "-A", "-t", dsn, "-c", `\conninfo`).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "SSL connection") {
			t.Errorf("psql over TLS: %v\n%s", err, out)
		}
	}

	// Bytes sent after SSLRequest, before the handshake, are refused.
	c, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := bin.BigEndian.AppendUint32(bin.BigEndian.AppendUint32(nil, 8), 80877103)
	c.Write(append(req, "injected"...))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, 1)
	if _, err := c.Read(b); err != nil || b[0] != 'E' {
		t.Errorf("data after SSLRequest: got %q %v, want an ErrorResponse", b, err)
	}
}

// pemDER is the DER of the first certificate in a PEM file.
func pemDER(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(data)
	if b == nil || b.Type != "CERTIFICATE" {
		t.Fatalf("%s holds no certificate", path)
	}
	return b.Bytes
}

// replaceFile puts src's content at dst with a rename, as a certificate
// manager renewing a certificate does.
func replaceFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	tmp := dst + ".new"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		t.Fatal(err)
	}
}

// A renewed certificate: the files are replaced and SIGHUP sent; new TLS
// connections get the new certificate, a session already in TLS goes on
// with the old one. A key that does not match the certificate changes
// nothing and is counted as a failed reload.
func TestSIGHUPReloadsTheTLSCertificate(t *testing.T) {
	certA, keyA := writeSelfSigned(t, t.TempDir())
	certB, keyB := writeSelfSigned(t, t.TempDir())
	live := t.TempDir()
	cert, key := filepath.Join(live, "server.crt"), filepath.Join(live, "server.key")
	replaceFile(t, certA, cert)
	replaceFile(t, keyA, key)
	// Clients trust both, so verify-full passes before and after.
	roots := filepath.Join(live, "roots.pem")
	a, _ := os.ReadFile(certA)
	b, _ := os.ReadFile(certB)
	os.WriteFile(roots, append(a, b...), 0o644)

	p := startProxy(t, proxyOptions{env: map[string]string{
		"PGRANGER_LISTEN__TLS_CERT": cert, "PGRANGER_LISTEN__TLS_KEY": key, "PGRANGER_LISTEN__REQUIRE_TLS": "true",
	}})
	dsn := strings.Replace(p.dsn("bob", "bob"), "sslmode=disable", "sslmode=verify-full&sslrootcert="+roots, 1)
	open := func(what string) (*pgx.Conn, []byte) {
		t.Helper()
		conn, err := pgx.Connect(ctx(t), dsn)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		t.Cleanup(func() { conn.Close(context.Background()) })
		tc, ok := conn.PgConn().Conn().(*tls.Conn)
		if !ok {
			t.Fatalf("%s: not a TLS connection: %T", what, conn.PgConn().Conn())
		}
		return conn, tc.ConnectionState().PeerCertificates[0].Raw
	}
	before, served := open("before the renewal")
	if !bytes.Equal(served, pemDER(t, certA)) {
		t.Fatal("the proxy does not serve certificate A at start")
	}
	reloads := func(result string) float64 {
		return value(scrape(t, p), "pgranger_config_reloads_total", "result="+result)
	}
	hup := func(result string, want float64) {
		t.Helper()
		if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		eventually(t, 5*time.Second, func() string {
			if v := reloads(result); v != want {
				return fmt.Sprintf("pgranger_config_reloads_total{result=%q} = %v, want %v", result, v, want)
			}
			return ""
		})
	}

	replaceFile(t, certB, cert)
	replaceFile(t, keyB, key)
	hup("ok", 1)
	after, served := open("after the renewal")
	if !bytes.Equal(served, pemDER(t, certB)) {
		t.Error("a new connection after SIGHUP does not get certificate B")
	}
	equalLines(t, "the new session", rows(t, after, "SELECT ssn FROM sales.orders WHERE id = 1"), []string{"xxx-xx-1111"})
	equalLines(t, "the session opened before the renewal", rows(t, before, "SELECT ssn FROM sales.orders WHERE id = 3"), []string{"xxx-xx-3333"})
	if tc := before.PgConn().Conn().(*tls.Conn); !bytes.Equal(tc.ConnectionState().PeerCertificates[0].Raw, pemDER(t, certA)) {
		t.Error("the session opened before the renewal changed certificate")
	}

	// Certificate A with key B: the pair does not load, nothing changes.
	replaceFile(t, certA, cert)
	hup("error", 1)
	if v := reloads("ok"); v != 1 {
		t.Errorf("reloads ok = %v after a failed one, want 1", v)
	}
	_, served = open("after a failed reload")
	if !bytes.Equal(served, pemDER(t, certB)) {
		t.Error("a failed reload replaced the certificate")
	}
	if !strings.Contains(p.log(), `msg="configuration reload failed; the running configuration stays"`) ||
		!strings.Contains(p.log(), "listen.tls-cert: tls: private key does not match public key") {
		t.Errorf("the log does not name the failed reload's cause:\n%s", p.log())
	}
}
