package pgwire

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgranger/pgranger/identity"
	"github.com/pgranger/pgranger/sqlstate"
)

const (
	codeSSLRequest    = 80877103
	codeGSSENCRequest = 80877104
	codeCancelRequest = 80877102
	protocolV3        = 3 << 16
)

// fatalError is an error the client must see before the connection closes.
type fatalError struct {
	code, msg string
	hint      string
}

func (e *fatalError) Error() string { return e.code + ": " + e.msg }

func fatalf(code, format string, args ...any) *fatalError {
	return &fatalError{code: code, msg: fmt.Sprintf(format, args...)}
}

// ownedStartupParams are handled by pgranger itself, never forwarded.
var ownedStartupParams = map[string]bool{"user": true, "database": true, "options": true, "replication": true, "client_encoding": true}

func (s *Server) handle(ctx context.Context, c net.Conn) {
	c = s.obs.countConn(withRawIO(c))
	defer c.Close()
	if s.clients.Add(1) > int64(s.cfg.Listen.MaxClients) {
		s.clients.Add(-1)
		s.obs.reject("max_clients")
		w := bufio.NewWriter(c)
		writeError(w, "FATAL", &fatalError{code: sqlstate.TooManyConnections, msg: "sorry, too many clients already (listen.max-clients)"})
		w.Flush()
		return
	}
	defer s.clients.Add(-1)

	c.SetDeadline(time.Now().Add(time.Duration(s.cfg.Listen.StartupTimeoutSecs) * time.Second))
	cc := &clientConn{conn: c, r: bufio.NewReaderSize(c, 32*1024), w: bufio.NewWriterSize(c, 32*1024)}
	defer func() { cc.conn.Close() }()
	sess, err := s.startup(ctx, cc)
	if err != nil {
		var fe *fatalError
		if errors.As(err, &fe) {
			writeError(cc.w, "FATAL", fe)
			cc.w.Flush()
		}
		s.obs.startupFailed(err)
		if !errors.Is(err, errCancelHandled) && !errors.Is(err, errClientGone) {
			s.log.Info("connection refused", "client", c.RemoteAddr().String(), "err", err)
		}
		return
	}
	cc.conn.SetDeadline(time.Time{})
	sess.run()
}

// clientConn is the client side during startup; TLS replaces all three.
type clientConn struct {
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
	tls  bool
}

// startTLS answers an SSLRequest. Bytes the client sent after the request
// but before the handshake would be read as if they came over TLS; they
// are refused (as PostgreSQL does since CVE-2021-23214).
func (s *Server) startTLS(cc *clientConn) error {
	if s.opts.TLS == nil || cc.tls {
		cc.w.WriteByte('N')
		if err := cc.w.Flush(); err != nil {
			return errClientGone
		}
		return nil
	}
	if cc.r.Buffered() > 0 {
		return fatalf(sqlstate.ProtocolViolation, "received unencrypted data after SSL request")
	}
	cc.w.WriteByte('S')
	if err := cc.w.Flush(); err != nil {
		return errClientGone
	}
	tc := tls.Server(cc.conn, s.opts.TLS)
	if err := tc.Handshake(); err != nil {
		return &tlsHandshakeError{err}
	}
	cc.conn, cc.tls = tc, true
	cc.r = bufio.NewReaderSize(tc, 32*1024)
	cc.w = bufio.NewWriterSize(tc, 32*1024)
	return nil
}

// LoadTLS builds the client-side TLS configuration from PEM files
// (listen.tls-cert, listen.tls-key): TLS 1.2 or newer.
func LoadTLS(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

var (
	errCancelHandled = errors.New("cancel request handled")
	errClientGone    = errors.New("client went away during startup")
)

// startup runs the startup phase up to ReadyForQuery and returns a session
// ready to relay.
func (s *Server) startup(ctx context.Context, cc *clientConn) (*session, error) {
	var params map[string]string
	for params == nil {
		pkt, err := readStartup(cc.r, 10000)
		if err != nil {
			return nil, errClientGone
		}
		cw := cc.w
		code := binary.BigEndian.Uint32(pkt)
		switch {
		case code == codeSSLRequest:
			if err := s.startTLS(cc); err != nil {
				return nil, err
			}
		case code == codeGSSENCRequest:
			// No GSSAPI encryption: 'N' tells the client to go on.
			cw.WriteByte('N')
			if err := cw.Flush(); err != nil {
				return nil, errClientGone
			}
		case code == codeCancelRequest && len(pkt) == 12:
			s.cancel(binary.BigEndian.Uint32(pkt[4:]), binary.BigEndian.Uint32(pkt[8:]))
			return nil, errCancelHandled
		case code>>16 == 3:
			params, err = parseStartupParams(pkt[4:])
			if err != nil {
				return nil, fatalf(sqlstate.ProtocolViolation, "%v", err)
			}
			if minor := code & 0xffff; minor > 0 {
				// Protocol 3.x with x > 0: offer 3.0, as PostgreSQL does.
				var unknown []string
				for k := range params {
					if strings.HasPrefix(k, "_pq_.") {
						unknown = append(unknown, k)
					}
				}
				writeMsg(cw, &pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0, UnrecognizedOptions: unknown})
			}
		default:
			return nil, fatalf(sqlstate.ProtocolViolation, "unsupported frontend protocol %d.%d: server supports 3.0", code>>16, code&0xffff)
		}
	}
	user := params["user"]
	if user == "" {
		return nil, fatalf(sqlstate.InvalidAuthorization, "no PostgreSQL user name specified in startup packet")
	}
	database := params["database"]
	if database == "" {
		database = user
	}
	if _, ok := params["replication"]; ok && params["replication"] != "false" && params["replication"] != "0" {
		return nil, fatalf(sqlstate.FeatureNotSupported, "replication connections are not supported through pgranger")
	}
	switch strings.ToUpper(strings.ReplaceAll(params["client_encoding"], "-", "")) {
	case "", "UTF8", "UNICODE", "SQL_ASCII", "AUTO":
		// SQL_ASCII (libpq's choice under the C locale) passes bytes
		// through, which UTF8 output satisfies.
	default:
		return nil, fatalf(sqlstate.InvalidParameterValue, "client_encoding %q is not supported: pgranger sessions use UTF8", params["client_encoding"])
	}
	settings, err := startupSettings(params)
	if err != nil {
		return nil, err
	}

	if !cc.tls && s.cfg.Listen.RequireTLS {
		return nil, fatalf(sqlstate.InvalidAuthorization, "pgranger requires TLS (listen.require-tls)")
	}
	c, cr, cw := cc.conn, cc.r, cc.w
	var id *identity.Identity
	if s.opts.Auth.UsesToken(user) {
		id, err = s.authenticateToken(ctx, cc, user)
	} else {
		id, err = s.authenticate(c, cr, cw, user)
	}
	if err != nil {
		return nil, err
	}
	s.log.Debug("authenticated", identityAttrs(id, "client", c.RemoteAddr().String())...)
	if fe := s.checkStartupSettings(id.User, settings); fe != nil {
		return nil, fe
	}

	pool, cat, err := s.database(ctx, database)
	if err != nil {
		s.log.Warn("backend unavailable", "database", database, "err", err)
		return nil, backendFatal(err, database)
	}
	bc, err := s.obs.acquire(ctx, pool)
	if err != nil {
		s.log.Warn("backend connection failed", "database", database, "err", err)
		return nil, backendFatal(err, database)
	}
	sess := newSession(s, c, cr, cw, bc, id, database, cat)
	sess.rsess.DefaultSearchPath = pool.defaultSearchPath
	sess.paths.current = pool.defaultSearchPath
	if err := sess.applySettings(settings); err != nil {
		pool.discard(bc)
		return nil, err
	}
	pid, secret := s.newCancelKey(sess)
	writeMsg(cw, &pgproto3.AuthenticationOk{})
	for _, k := range sortedParamNames(bc.params) {
		writeMsg(cw, &pgproto3.ParameterStatus{Name: k, Value: sess.clientParam(k, bc.params[k])})
	}
	writeMsg(cw, &pgproto3.BackendKeyData{ProcessID: pid, SecretKey: binary.BigEndian.AppendUint32(nil, secret)})
	writeMsg(cw, &pgproto3.ReadyForQuery{TxStatus: 'I'})
	if err := cw.Flush(); err != nil {
		s.sessions.Delete(sess.cancelKey)
		sess.releaseBackend()
		return nil, errClientGone
	}
	return sess, nil
}

func backendFatal(err error, database string) *fatalError {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return &fatalError{code: pe.Code, msg: pe.Message}
	}
	if errors.Is(err, errPoolExhausted) {
		return fatalf(sqlstate.TooManyConnections, "%v", err)
	}
	if errors.Is(err, errShuttingDown) {
		// PostgreSQL's answer to a connection during its shutdown.
		return fatalf(sqlstate.CannotConnectNow, "the database system is shutting down")
	}
	return fatalf(sqlstate.ConnectionFailure, "pgranger cannot reach the backend for database %q", database)
}

func parseStartupParams(b []byte) (map[string]string, error) {
	params := map[string]string{}
	for len(b) > 0 && b[0] != 0 {
		k, rest, ok := cstring(b)
		if !ok {
			return nil, errors.New("malformed startup packet")
		}
		v, rest, ok := cstring(rest)
		if !ok {
			return nil, errors.New("malformed startup packet")
		}
		params[k] = v
		b = rest
	}
	return params, nil
}

// startupSettings turns startup parameters and "-c name=value" options
// into the settings to apply on the backend (checkStartupSettings decides
// them once the user is known).
func startupSettings(params map[string]string) ([][2]string, error) {
	var out [][2]string
	for _, k := range sortedParamNames(params) {
		if ownedStartupParams[k] || strings.HasPrefix(k, "_pq_.") {
			continue
		}
		out = append(out, [2]string{k, params[k]})
	}
	opts, err := parseOptions(params["options"])
	if err != nil {
		return nil, err
	}
	return append(out, opts...), nil
}

// checkStartupSettings holds the startup settings of an authenticated
// user to the list SET follows (sqlrewrite/settings.go, docs/security.md
// "Session settings"): a refused one ends the login with FATAL 42501
// before a backend connection is taken.
func (s *Server) checkStartupSettings(user string, settings [][2]string) *fatalError {
	for _, kv := range settings {
		if e := s.opts.Rewriter.CheckStartupSetting(user, kv[0], kv[1]); e != nil {
			return &fatalError{code: e.Code, msg: e.Message, hint: e.Hint}
		}
	}
	return nil
}

// parseOptions reads the startup "options" parameter: -c name=value and
// --name=value, backslash escaping a space, as the backend does.
func parseOptions(s string) ([][2]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	var out [][2]string
	for i := 0; i < len(words); i++ {
		w := words[i]
		var kv string
		switch {
		case w == "-c" && i+1 < len(words):
			i++
			kv = words[i]
		case strings.HasPrefix(w, "-c"):
			kv = w[2:]
		case strings.HasPrefix(w, "--"):
			kv = w[2:]
		default:
			return nil, fatalf(sqlstate.FeatureNotSupported, "startup option %q is not supported through pgranger (only -c name=value)", w)
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fatalf(sqlstate.ProtocolViolation, "invalid startup option %q", kv)
		}
		out = append(out, [2]string{strings.ReplaceAll(k, "-", "_"), v})
	}
	return out, nil
}

// authenticate runs SCRAM-SHA-256 with the client.
func (s *Server) authenticate(c net.Conn, cr *bufio.Reader, cw *bufio.Writer, user string) (*identity.Identity, error) {
	failed := fatalf(sqlstate.InvalidPassword, "password authentication failed for user %q", user)
	conv, err := s.opts.Auth.BeginSCRAM(user)
	if err != nil {
		return nil, failed
	}
	writeMsg(cw, &pgproto3.AuthenticationSASL{AuthMechanisms: []string{identity.SCRAMMechanism}})
	if err := cw.Flush(); err != nil {
		return nil, errClientGone
	}
	mr := newMsgReader(cr, 10000)
	typ, body, err := mr.next()
	if err != nil {
		return nil, errClientGone
	}
	var first pgproto3.SASLInitialResponse
	if typ != 'p' || first.Decode(body) != nil || first.AuthMechanism != identity.SCRAMMechanism {
		return nil, fatalf(sqlstate.ProtocolViolation, "expected a SASL response with mechanism %s", identity.SCRAMMechanism)
	}
	reply, err := conv.Step(first.Data)
	if err != nil {
		return nil, failed
	}
	writeMsg(cw, &pgproto3.AuthenticationSASLContinue{Data: reply})
	if err := cw.Flush(); err != nil {
		return nil, errClientGone
	}
	typ, body, err = mr.next()
	if err != nil {
		return nil, errClientGone
	}
	var final pgproto3.SASLResponse
	if typ != 'p' || final.Decode(body) != nil {
		return nil, fatalf(sqlstate.ProtocolViolation, "expected a SASL response")
	}
	reply, err = conv.Step(final.Data)
	if err != nil {
		return nil, failed
	}
	id, err := conv.Identity()
	if err != nil {
		return nil, failed
	}
	writeMsg(cw, &pgproto3.AuthenticationSASLFinal{Data: reply})
	return id, nil
}

// maxTokenMessage bounds the PasswordMessage of a token login (a token
// with a few hundred roles is still far below it).
const maxTokenMessage = 64 << 10

// authenticateToken runs a token login: AuthenticationCleartextPassword,
// the client's PasswordMessage holding a JWT, and its verification. The
// token travels in the clear inside the connection, so a connection without
// TLS is refused before it is asked for (unless
// listen.allow-plaintext-password, for loopback demos).
//
// SQLSTATEs: 28000 for a connection without TLS, a token for another user
// and an issuer whose keys cannot be had; 28P01 for every token that is not
// acceptable (expired, not yet valid, wrong issuer or audience, bad
// signature, refused algorithm, unknown key, malformed). Messages name the
// reason and never contain the token.
func (s *Server) authenticateToken(ctx context.Context, cc *clientConn, user string) (*identity.Identity, error) {
	if !cc.tls && !s.cfg.Listen.AllowPlaintextPassword {
		return nil, fatalf(sqlstate.InvalidAuthorization, "pgranger: token login for user %q needs a TLS connection (sslmode=require); the token would travel in the clear (listen.allow-plaintext-password is off)", user)
	}
	writeMsg(cc.w, &pgproto3.AuthenticationCleartextPassword{})
	if err := cc.w.Flush(); err != nil {
		return nil, errClientGone
	}
	typ, body, err := newMsgReader(cc.r, maxTokenMessage).next()
	if errors.Is(err, errMessageTooLarge) {
		return nil, fatalf(sqlstate.InvalidPassword, "pgranger: token authentication failed for user %q: the password message is larger than %d bytes", user, maxTokenMessage)
	}
	if err != nil {
		return nil, errClientGone
	}
	var pw pgproto3.PasswordMessage
	if typ != 'p' || pw.Decode(body) != nil {
		return nil, fatalf(sqlstate.ProtocolViolation, "expected a password message")
	}
	vctx, cancel := context.WithTimeout(ctx, time.Duration(s.cfg.Listen.StartupTimeoutSecs)*time.Second)
	defer cancel()
	id, err := s.opts.Auth.VerifyToken(vctx, user, pw.Password)
	if err != nil {
		var ae *identity.AuthError
		if !errors.As(err, &ae) {
			return nil, fatalf(sqlstate.InvalidPassword, "pgranger: token authentication failed for user %q", user)
		}
		switch ae.Kind {
		case identity.TokenUserMismatch:
			return nil, fatalf(sqlstate.InvalidAuthorization, "pgranger: token authentication failed for user %q: %s", user, ae.Reason)
		case identity.TokenUnverifiable:
			return nil, fatalf(sqlstate.InvalidAuthorization, "pgranger: token authentication failed for user %q: %s", user, ae.Reason)
		default:
			return nil, fatalf(sqlstate.InvalidPassword, "pgranger: token authentication failed for user %q: %s", user, ae.Reason)
		}
	}
	return id, nil
}

// identityAttrs are the log attributes of an identity: user, method, roles
// and, for a token, its sub, jti and expiry — never the token.
func identityAttrs(id *identity.Identity, extra ...any) []any {
	out := []any{"user", id.User, "method", id.Method, "roles", id.Roles}
	if id.Method == identity.MethodJWT {
		out = append(out, "sub", id.Subject, "jti", id.TokenID, "exp", id.TokenExpiry.UTC().Format(time.RFC3339))
	}
	return append(out, extra...)
}

// tlsHandshakeError is a client's TLS handshake that failed: counted as a
// "tls" rejection.
type tlsHandshakeError struct{ err error }

func (e *tlsHandshakeError) Error() string { return "TLS handshake: " + e.err.Error() }
func (e *tlsHandshakeError) Unwrap() error { return e.err }
