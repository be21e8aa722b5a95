package pgwire

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// backendConn is one connection to PostgreSQL as the service role, taken
// over from pgconn after it did the backend's authentication and TLS. While
// a session holds it, the session's two goroutines own it: the client loop
// writes (w), the backend loop reads (r). In the pool nobody touches it.
type backendConn struct {
	conn   net.Conn
	r      *bufio.Reader
	w      *bufio.Writer
	pid    uint32
	secret []byte
	// params are the backend's current ParameterStatus values.
	params              map[string]string
	cancelNet, cancelTo string // where a CancelRequest goes: tcp host:port, or the server's Unix-domain socket
	pool                *backendPool
	// views are the security-barrier views this backend session holds
	// (client loop asks, backend loop confirms; see views.go).
	views viewSet
}

// backendPool holds idle connections to one database and bounds how many
// exist. Session pooling: a client keeps its connection until it leaves.
type backendPool struct {
	cfg            *pgconn.Config
	max            int
	acquireT       time.Duration
	allowSuperuser bool

	mu   sync.Mutex
	cond *sync.Cond
	idle []*backendConn
	open int // connections in use or idle

	// defaultSearchPath is the service role's search_path, read from the
	// first connection; sessions start with it.
	defaultSearchPath []string
}

func newBackendPool(dsn, database string, max int, connectTimeout, acquireTimeout time.Duration) (*backendPool, error) {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("backend.dsn: %w", err)
	}
	cfg.Database = database
	cfg.ConnectTimeout = connectTimeout
	// The parser's assumptions (docs/security.md, "Session settings"): given at startup they are
	// also the values DISCARD ALL / RESET ALL return to.
	cfg.RuntimeParams["client_encoding"] = "UTF8"
	cfg.RuntimeParams["standard_conforming_strings"] = "on"
	dial := cfg.DialFunc
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return withRawIO(c), nil // beneath TLS to the backend, when the DSN asks for it
	}
	p := &backendPool{cfg: cfg, max: max, acquireT: acquireTimeout}
	p.cond = sync.NewCond(&p.mu)
	return p, nil
}

// errPoolExhausted is returned when no backend connection frees up in time.
var errPoolExhausted = errors.New("all backend connections are in use (backend.pool-size)")

func (p *backendPool) acquire(ctx context.Context) (*backendConn, error) {
	deadline := time.Now().Add(p.acquireT)
	timer := time.AfterFunc(p.acquireT, func() {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	})
	defer timer.Stop()
	// A waiter whose context ends (a shutdown's deadline) stops waiting.
	stop := context.AfterFunc(ctx, func() {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	})
	defer stop()
	p.mu.Lock()
	for {
		if n := len(p.idle); n > 0 {
			bc := p.idle[n-1]
			p.idle = p.idle[:n-1]
			p.mu.Unlock()
			if !bc.alive() {
				// Its backend went away while it sat in the pool
				// (pg_terminate_backend, a restart of PostgreSQL): never
				// hand it out; take the next or open a new one.
				p.discard(bc)
				p.mu.Lock()
				continue
			}
			return bc, nil
		}
		if p.open < p.max {
			p.open++
			p.mu.Unlock()
			bc, err := p.connect(ctx)
			if err != nil {
				p.mu.Lock()
				p.open--
				p.cond.Signal()
				p.mu.Unlock()
				return nil, err
			}
			return bc, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			p.mu.Unlock()
			return nil, errPoolExhausted
		}
		p.cond.Wait()
	}
}

// release returns a clean connection (the session reset it) to the pool.
func (p *backendPool) release(bc *backendConn) {
	p.mu.Lock()
	p.idle = append(p.idle, bc)
	p.cond.Signal()
	p.mu.Unlock()
}

// discard closes a connection that cannot be reused.
func (p *backendPool) discard(bc *backendConn) {
	bc.conn.Close()
	p.mu.Lock()
	p.open--
	p.cond.Signal()
	p.mu.Unlock()
}

func (p *backendPool) closeIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.open -= len(idle)
	p.mu.Unlock()
	for _, bc := range idle {
		bc.conn.Close()
	}
}

func (p *backendPool) connect(ctx context.Context) (*backendConn, error) {
	pc, err := pgconn.ConnectConfig(ctx, p.cfg)
	if err != nil {
		return nil, err
	}
	params := map[string]string{}
	for _, k := range []string{"server_version", "server_encoding", "client_encoding", "application_name",
		"default_transaction_read_only", "in_hot_standby", "is_superuser", "session_authorization", "DateStyle",
		"IntervalStyle", "TimeZone", "integer_datetimes", "standard_conforming_strings"} {
		if v := pc.ParameterStatus(k); v != "" {
			params[k] = v
		}
	}
	if pc.ParameterStatus("is_superuser") == "on" && !p.allowSuperuser {
		pc.Close(ctx)
		return nil, errors.New("the backend role is a superuser, which would bypass row security and grants; use a least-privilege role or set backend.allow-superuser")
	}
	// pgconn may still have a read of the socket in flight after the
	// handshake: a write that takes over 15 ms (a busy host) starts its
	// background reader, which stops only after its next read returns —
	// and that read would take the answer to the session's first
	// statement, which nobody reads any more (the session then waits
	// for ever). That was the hang of one session among hundreds opened
	// at once, with a busy host (e2e TestBackpressureIdleSessions,
	// TestBackendConnectLeavesNoReadInFlight). SyncConn waits until no
	// read is in flight and nothing is buffered, as pgconn asks before a
	// hijack.
	if err := pc.SyncConn(ctx); err != nil {
		pc.Close(ctx)
		return nil, err
	}
	hc, err := pc.Hijack()
	if err != nil {
		pc.Close(ctx)
		return nil, err
	}
	for k, v := range hc.ParameterStatuses {
		params[k] = v
	}
	bc := &backendConn{
		conn:      hc.Conn,
		r:         bufio.NewReaderSize(hc.Conn, 32*1024),
		w:         bufio.NewWriterSize(hc.Conn, 32*1024),
		pid:       hc.PID,
		secret:    hc.SecretKey,
		params:    params,
		cancelNet: "tcp",
		cancelTo:  net.JoinHostPort(hc.Config.Host, fmt.Sprint(hc.Config.Port)),
		pool:      p,
	}
	if strings.HasPrefix(hc.Config.Host, "/") {
		// host names a socket directory, as in libpq.
		bc.cancelNet, bc.cancelTo = "unix", fmt.Sprintf("%s/.s.PGSQL.%d", hc.Config.Host, hc.Config.Port)
	}
	p.mu.Lock()
	needPath := p.defaultSearchPath == nil
	p.mu.Unlock()
	if needPath {
		v, err := bc.simpleValue("SHOW search_path")
		if err != nil {
			bc.conn.Close()
			return nil, fmt.Errorf("reading the backend's search_path: %w", err)
		}
		p.mu.Lock()
		p.defaultSearchPath = parseSearchPath(v)
		p.mu.Unlock()
	}
	return bc, nil
}

// simpleValue runs a one-row, one-column query synchronously (only while no
// session owns the connection).
func (bc *backendConn) simpleValue(sql string) (string, error) {
	if err := writeMsg(bc.w, &pgproto3.Query{String: sql}); err != nil {
		return "", err
	}
	if err := bc.w.Flush(); err != nil {
		return "", err
	}
	mr := newMsgReader(bc.r, 1<<20)
	var value string
	var failure error
	for {
		typ, body, err := mr.next()
		if err != nil {
			return "", err
		}
		switch typ {
		case 'D':
			var dr pgproto3.DataRow
			if err := dr.Decode(body); err == nil && len(dr.Values) > 0 {
				value = string(dr.Values[0])
			}
		case 'E':
			var er pgproto3.ErrorResponse
			er.Decode(body)
			failure = errors.New(er.Message)
		case 'S':
			bc.noteParameter(body)
		case 'Z':
			return value, failure
		}
	}
}

func (bc *backendConn) noteParameter(body []byte) {
	name, rest, ok := cstring(body)
	if !ok {
		return
	}
	value, _, _ := cstring(rest)
	bc.params[name] = value
}

// cancel asks PostgreSQL to cancel whatever this connection runs now.
func (bc *backendConn) cancel() {
	c, err := net.DialTimeout(bc.cancelNet, bc.cancelTo, 5*time.Second)
	if err != nil {
		return
	}
	defer c.Close()
	pkt := make([]byte, 12, 12+len(bc.secret))
	binary.BigEndian.PutUint32(pkt[0:], uint32(12+len(bc.secret)))
	binary.BigEndian.PutUint32(pkt[4:], codeCancelRequest)
	binary.BigEndian.PutUint32(pkt[8:], bc.pid)
	pkt = append(pkt, bc.secret...)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write(pkt)
}

// parseSearchPath splits SHOW search_path output ("$user", public) into
// schema names, undoing identifier quoting.
func parseSearchPath(v string) []string {
	var out []string
	for i := 0; i < len(v); {
		for i < len(v) && (v[i] == ' ' || v[i] == ',') {
			i++
		}
		if i >= len(v) {
			break
		}
		if v[i] == '"' {
			var b strings.Builder
			i++
			for i < len(v) {
				if v[i] == '"' {
					if i+1 < len(v) && v[i+1] == '"' {
						b.WriteByte('"')
						i += 2
						continue
					}
					i++
					break
				}
				b.WriteByte(v[i])
				i++
			}
			out = append(out, b.String())
			continue
		}
		j := i
		for j < len(v) && v[j] != ',' {
			j++
		}
		out = append(out, strings.TrimSpace(v[i:j]))
		i = j
	}
	if out == nil {
		out = []string{}
	}
	return out
}
