package pgwire

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

func TestIsFatal(t *testing.T) {
	for _, c := range []struct {
		er   pgproto3.ErrorResponse
		want bool
	}{
		{pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: "57P01", Message: "terminating connection due to administrator command"}, true},
		{pgproto3.ErrorResponse{Severity: "PANIC", SeverityUnlocalized: "PANIC", Code: "XX000"}, true},
		// A server with lc_messages = 'de_DE': the unlocalized field decides.
		{pgproto3.ErrorResponse{Severity: "FEHLER", SeverityUnlocalized: "ERROR", Code: "42501"}, false},
		{pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: "57014"}, false},
		// Servers before 9.6 send only the localized one.
		{pgproto3.ErrorResponse{Severity: "FATAL", Code: "57P01"}, true},
	} {
		if got := isFatal(encodeError(&c.er)); got != c.want {
			t.Errorf("isFatal(%s %s) = %v, want %v", c.er.Severity, c.er.Code, got, c.want)
		}
	}
	if isFatal([]byte("Smalformed")) {
		t.Error("a malformed body is not a FATAL error")
	}
}

// alive tells an idle pooled connection that still works from one whose
// backend sent something (PostgreSQL's FATAL on pg_terminate_backend) or
// closed it, without blocking.
func TestAlive(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pair := func() (*backendConn, net.Conn) {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		peer, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(); peer.Close() })
		return &backendConn{conn: c, r: bufio.NewReader(c)}, peer
	}
	waitFor := func(bc *backendConn, want bool) {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if bc.alive() == want {
				return
			}
		}
		t.Errorf("alive() never became %v", want)
	}

	quiet, _ := pair()
	start := time.Now()
	if !quiet.alive() {
		t.Error("a quiet connection is alive")
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("alive() took %v; it must not wait", d)
	}

	spoke, peer := pair()
	b, _ := (&pgproto3.ErrorResponse{Severity: "FATAL", Code: "57P01"}).Encode(nil)
	peer.Write(b)
	waitFor(spoke, false)

	closed, peer := pair()
	peer.Close()
	waitFor(closed, false)

	buffered, _ := pair()
	buffered.r = bufio.NewReader(&oneByte{})
	buffered.r.Peek(1)
	if buffered.alive() {
		t.Error("a connection with unread buffered input is not alive")
	}
}

type oneByte struct{ done bool }

func (o *oneByte) Read(p []byte) (int, error) {
	if o.done {
		return 0, nil
	}
	o.done = true
	p[0] = 'E'
	return 1, nil
}
