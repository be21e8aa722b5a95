package pgwire

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// A backend connection taken over from pgconn must have no read of the
// socket still in flight. pgconn starts a background reader when one of
// its writes takes over 15 ms (a busy host: the writing goroutine is
// descheduled); when the server's whole answer arrives before pgconn
// stops that reader, it reads again, and that read — still waiting after
// the handshake — took the answer to the session's first statement: the
// session waited for ever (one in a few hundred logins under make test's
// load). Here the handshake's first write is made to last 30 ms after
// its bytes went out, which leaves pgconn's reader in that state every
// time; the first query on the pooled connection must still be answered.
func TestBackendConnectLeavesNoReadInFlight(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go serveHandshakeAndQueries(ln)

	addr := ln.Addr().(*net.TCPAddr)
	dsn := "host=127.0.0.1 port=" + strconv.Itoa(addr.Port) + " user=svc sslmode=disable"
	p, err := newBackendPool(dsn, "demo", 4, 5*time.Second, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	p.defaultSearchPath = []string{} // no SHOW search_path: the first query is the test's
	dial := p.cfg.DialFunc
	p.cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &slowFirstWrite{Conn: c}, nil
	}
	for i := 0; i < 3; i++ {
		bc, err := p.acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		bc.conn.SetReadDeadline(time.Now().Add(3 * time.Second))
		v, err := bc.simpleValue("SELECT 'answered'")
		if err != nil || v != "answered" {
			t.Fatalf("connection %d: the first query's answer: %q, %v (want \"answered\": a read left in flight by the handshake took it)", i+1, v, err)
		}
		bc.conn.SetReadDeadline(time.Time{})
		p.discard(bc)
	}
}

// slowFirstWrite returns from its first Write 30 ms after the bytes went
// out: the server has answered by then.
type slowFirstWrite struct {
	net.Conn
	wrote bool
}

func (c *slowFirstWrite) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if !c.wrote {
		c.wrote = true
		time.Sleep(30 * time.Millisecond)
	}
	return n, err
}

// serveHandshakeAndQueries is a PostgreSQL server enough for a pool's
// connections: trust authentication, and every simple Query answered with
// one row holding the query's first quoted string (or "ok").
func serveHandshakeAndQueries(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			be := pgproto3.NewBackend(c, c)
			if _, err := be.ReceiveStartupMessage(); err != nil {
				return
			}
			be.Send(&pgproto3.AuthenticationOk{})
			be.Send(&pgproto3.ParameterStatus{Name: "server_version", Value: "15.0"})
			be.Send(&pgproto3.BackendKeyData{ProcessID: 1, SecretKey: []byte{0, 0, 0, 1}})
			be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
			if be.Flush() != nil {
				return
			}
			for {
				msg, err := be.Receive()
				if err != nil {
					return
				}
				q, ok := msg.(*pgproto3.Query)
				if !ok {
					return
				}
				v := "ok"
				if parts := strings.Split(q.String, "'"); len(parts) >= 3 {
					v = parts[1]
				}
				be.Send(&pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{{Name: []byte("v"), DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1}}})
				be.Send(&pgproto3.DataRow{Values: [][]byte{[]byte(v)}})
				be.Send(&pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")})
				be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
				if be.Flush() != nil {
					return
				}
			}
		}()
	}
}
