package pgwire

import (
	"crypto/tls"
	"errors"
)

// reloadableTLS serves the certificate of t through GetCertificate, so
// ReloadTLS can replace it for new handshakes.
func (o *serverObs) reloadableTLS(t *tls.Config) *tls.Config {
	if t == nil || len(t.Certificates) != 1 {
		return t
	}
	cert := t.Certificates[0]
	o.cert.Store(&cert)
	c := t.Clone()
	c.Certificates = nil
	c.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return o.cert.Load(), nil }
	return c
}

// ReloadTLS reads listen.tls-cert and listen.tls-key again (a renewed
// certificate): handshakes from now on use it, sessions already in TLS keep
// theirs. It fails, changing nothing, when the files do not load or when
// the server was started without TLS (turning TLS on needs a restart).
func (s *Server) ReloadTLS(certFile, keyFile string) error {
	if s.obs.cert.Load() == nil {
		return errors.New("the server was started without listen.tls-cert; enabling TLS needs a restart")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return err
	}
	s.obs.cert.Store(&cert)
	return nil
}
