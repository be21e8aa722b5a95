package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	bin "encoding/binary"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
