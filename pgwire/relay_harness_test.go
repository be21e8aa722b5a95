package pgwire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/config"
	"github.com/pgranger/pgranger/identity"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/sqlrewrite"
)

// The relay's unit tests run a whole session — both loops, the pending
// queue, finish — between a client and a fake backend over in-memory
// connections (net.Pipe): no PostgreSQL. The fake backend speaks enough
// of the protocol for the shapes the relay must keep in order: simple and
// extended queries, pipelines and the skip to Sync after an error, COPY
// both ways, a cancel request (on a Unix-domain socket in the test's
// directory), and a connection that vanishes.

// fixedCatalog serves one snapshot.
type fixedCatalog struct{ snap *catalog.Snapshot }

func (c fixedCatalog) Current() *catalog.Snapshot { return c.snap }
func (c fixedCatalog) Refresh(context.Context, time.Duration) (*catalog.Snapshot, error) {
	relayRefreshes.Add(1)
	time.Sleep(relayRefreshDelay)
	return c.snap, nil
}

// relayRefreshDelay is how long a forced catalog reload takes;
// relayRefreshes counts the reloads begun.
var (
	relayRefreshDelay time.Duration
	relayRefreshes    atomic.Int64
)

type fixedPolicies struct{ st policy.Snapshot }

func (p fixedPolicies) Snapshot() policy.Snapshot { return p.st }

// relayPolicies: alice may read and write public.t; public.secret has no
// policy, so every statement on it is denied.
func relayPolicies(t testing.TB) *policy.Engine {
	t.Helper()
	sp := &ranger.ServicePolicies{ServiceName: "hive", Policies: []ranger.RangerPolicy{{
		ID: 1, Name: "t", IsEnabled: true, Service: "hive", ServiceType: "hive",
		Resources: map[string]ranger.RangerPolicyResource{
			"database": {Values: []string{"public"}}, "table": {Values: []string{"t"}}, "column": {Values: []string{"*"}},
		},
		PolicyItems: []ranger.RangerPolicyItem{{Accesses: []ranger.RangerPolicyItemAccess{
			{Type: "select", IsAllowed: true}, {Type: "update", IsAllowed: true}}, Users: []string{"alice"}}},
	}}}
	eng, err := policy.NewEngine(&ranger.Bundle{Policies: sp}, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

func relayCatalog() *catalog.Snapshot {
	id := catalog.Column{Name: "id", TypeOID: 23, BaseOID: 23, TypMod: -1, TypeName: "integer"}
	return catalog.Static(1, []*catalog.Relation{
		{OID: 2001, Schema: "public", Name: "t", Kind: 'r', Owner: "postgres", Columns: []catalog.Column{id}},
		{OID: 2002, Schema: "public", Name: "secret", Kind: 'r', Owner: "postgres", Columns: []catalog.Column{id}},
	}, nil)
}

// relayHarness is one session between a test client and a fake backend.
type relayHarness struct {
	t      testing.TB
	sess   *session
	srv    *Server
	fe     *pgproto3.Frontend
	client net.Conn // the test's end
	back   *fakeBackend
	pool   *backendPool
	pid    uint32
	secret uint32
	done   chan struct{} // closed when the session's run returns
}

func newRelayHarness(t testing.TB, configure ...func(*config.Config)) *relayHarness {
	return newRelayHarnessWith(t, nil, configure...)
}

// newRelayHarnessWith is newRelayHarness with opts changing the server's
// Options (policies, audit) before the session starts.
func newRelayHarnessWith(t testing.TB, opts func(*Options), configure ...func(*config.Config)) *relayHarness {
	t.Helper()
	cfg := config.Default()
	for _, f := range configure {
		f(cfg)
	}
	o := Options{
		Config:   cfg,
		Rewriter: sqlrewrite.New(sqlrewrite.Options{NamespaceMapping: "schema", CacheBytes: 1 << 20}),
		Policies: fixedPolicies{policy.Snapshot{Engine: relayPolicies(t), Generation: 1}},
		Log:      slog.New(slog.DiscardHandler),
	}
	if opts != nil {
		opts(&o)
	}
	srv := NewServer(o)
	proxyClient, testClient := net.Pipe()
	proxyBackend, fakeEnd := net.Pipe()
	if relayOverSockets {
		proxyClient, testClient = socketPair(t)
		proxyBackend, fakeEnd = socketPair(t)
		proxyClient, proxyBackend = withRawIO(proxyClient), withRawIO(proxyBackend)
	}

	sock := filepath.Join(t.TempDir(), "cancel.sock")
	back := newFakeBackend(t, fakeEnd, sock, 4242, 0xdeadbeef)
	pool := &backendPool{max: 1, open: 1}
	pool.cond = sync.NewCond(&pool.mu)
	bc := &backendConn{
		conn: proxyBackend, r: bufio.NewReaderSize(proxyBackend, 32<<10), w: bufio.NewWriterSize(proxyBackend, 32<<10),
		pid: 4242, secret: binary.BigEndian.AppendUint32(nil, 0xdeadbeef), params: map[string]string{},
		cancelNet: "unix", cancelTo: sock, pool: pool,
	}
	id := &identity.Identity{User: "alice", Method: identity.MethodSCRAM}
	sess := newSession(srv, proxyClient, bufio.NewReaderSize(proxyClient, 32<<10), bufio.NewWriterSize(proxyClient, 32<<10),
		bc, id, "postgres", fixedCatalog{relayCatalog()})
	sess.rsess.DefaultSearchPath = []string{"$user", "public"}
	sess.paths.current = sess.rsess.DefaultSearchPath
	pid, secret := srv.newCancelKey(sess)
	h := &relayHarness{t: t, sess: sess, srv: srv, fe: pgproto3.NewFrontend(testClient, testClient), client: testClient,
		back: back, pool: pool, pid: pid, secret: secret, done: make(chan struct{})}
	testClient.SetDeadline(time.Now().Add(20 * time.Second))
	go func() {
		defer close(h.done)
		sess.run()
		proxyClient.Close() // as Server.handle does
	}()
	t.Cleanup(func() {
		testClient.Close()
		select {
		case <-h.done:
		case <-time.After(15 * time.Second):
			t.Error("the session did not end")
		}
		back.close()
	})
	return h
}

// relayOverSockets: newRelayHarness builds sessions on socket pairs read
// and written with raw system calls (TestRelayOverSockets).
var relayOverSockets bool

// socketPair is a connected pair of Unix-domain sockets.
func socketPair(t testing.TB) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "pair.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	a, err := net.Dial("unix", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	return b, a
}

func (h *relayHarness) send(msgs ...pgproto3.FrontendMessage) {
	h.t.Helper()
	for _, m := range msgs {
		h.fe.Send(m)
	}
	if err := h.fe.Flush(); err != nil {
		h.t.Fatalf("client write: %v", err)
	}
}

// summary names a backend message the way the tests compare them.
func summary(m pgproto3.BackendMessage) string {
	switch m := m.(type) {
	case *pgproto3.RowDescription:
		return "T"
	case *pgproto3.DataRow:
		vals := make([]string, len(m.Values))
		for i, v := range m.Values {
			vals[i] = string(v)
		}
		return "D:" + strings.Join(vals, ",")
	case *pgproto3.CommandComplete:
		return "C:" + string(m.CommandTag)
	case *pgproto3.ErrorResponse:
		return "E:" + m.Severity + ":" + m.Code
	case *pgproto3.ReadyForQuery:
		return "Z:" + string(m.TxStatus)
	case *pgproto3.ParseComplete:
		return "1"
	case *pgproto3.BindComplete:
		return "2"
	case *pgproto3.CloseComplete:
		return "3"
	case *pgproto3.NoData:
		return "n"
	case *pgproto3.PortalSuspended:
		return "s"
	case *pgproto3.ParameterDescription:
		return "t"
	case *pgproto3.CopyInResponse:
		return "G"
	case *pgproto3.CopyOutResponse:
		return "H"
	case *pgproto3.CopyData:
		return "d:" + string(m.Data)
	case *pgproto3.CopyDone:
		return "c"
	case *pgproto3.EmptyQueryResponse:
		return "I"
	case *pgproto3.NoticeResponse:
		return "N:" + m.Severity + ":" + m.Message
	}
	return fmt.Sprintf("%T", m)
}

// until reads the client's messages up to one whose summary is last.
func (h *relayHarness) until(last string) []string {
	h.t.Helper()
	var got []string
	for {
		m, err := h.fe.Receive()
		if err != nil {
			h.t.Fatalf("client read after %v: %v", got, err)
		}
		got = append(got, summary(m))
		if got[len(got)-1] == last {
			return got
		}
	}
}

// readyN reads through n ReadyForQuery messages.
func (h *relayHarness) readyN(n int) []string {
	h.t.Helper()
	var got []string
	for i := 0; i < n; i++ {
		m := h.untilPrefix("Z:")
		got = append(got, m...)
	}
	return got
}

func (h *relayHarness) untilPrefix(prefix string) []string {
	h.t.Helper()
	var got []string
	for {
		m, err := h.fe.Receive()
		if err != nil {
			h.t.Fatalf("client read after %v: %v", got, err)
		}
		got = append(got, summary(m))
		if strings.HasPrefix(got[len(got)-1], prefix) {
			return got
		}
	}
}

// terminate ends the session as a client does and waits for finish: the
// backend connection is reset and returned to the pool.
func (h *relayHarness) terminate() {
	h.t.Helper()
	h.send(&pgproto3.Terminate{})
	select {
	case <-h.done:
	case <-time.After(10 * time.Second):
		h.t.Fatal("the session did not end after Terminate")
	}
}

func wantMessages(t testing.TB, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("client got\n\t%s\nwant\n\t%s", strings.Join(got, " "), strings.Join(want, " "))
	}
}

// relayNotices are what a backend sends with client_min_messages =
// debug5 and debug_print_plan on: a message at every severity a
// NoticeResponse can have, and one from a server that sends no
// non-localized severity ('V').
var relayNotices = []*pgproto3.NoticeResponse{
	{Severity: "LOG", SeverityUnlocalized: "LOG", Code: "00000", Message: "plan:", Detail: "{PLANNEDSTMT :commandType 1 …}"},
	{Severity: "DEBUG", SeverityUnlocalized: "DEBUG1", Code: "00000", Message: "debug one"},
	{Severity: "DEBUG", SeverityUnlocalized: "DEBUG5", Code: "00000", Message: "debug five"},
	{Severity: "NOTICE", SeverityUnlocalized: "NOTICE", Code: "00000", Message: "a notice", Hint: "h"},
	{Severity: "WARNING", SeverityUnlocalized: "WARNING", Code: "01000", Message: "a warning"},
	{Severity: "INFO", SeverityUnlocalized: "INFO", Code: "00000", Message: "an info"},
	{Severity: "LOG", Code: "00000", Message: "a log without V"},
	{Severity: "DEBUG", Code: "00000", Message: "a debug without V"},
}

// fakeBackend answers as PostgreSQL would, for the statements the tests
// send:
//
//	SELECT … 1/0 …        fails with 22012 when executed
//	SELECT 'sleep'        runs until a cancel request arrives: 57014
//	SELECT 'crash'        the connection vanishes
//	COPY … FROM STDIN     counts the rows sent; COPY … TO STDOUT sends 3
//	BEGIN, COMMIT, ROLLBACK, DISCARD ALL, SET …  their tags
//	denySQL               fails with 42703, as PostgreSQL does
//	'rows N'              N rows of 100 bytes
//	'wide N'              one row of N bytes
//	'notices'             relayNotices, then one row, "1"
//	anything else         one row, "1"
type fakeBackend struct {
	t        testing.TB
	conn     net.Conn
	be       *pgproto3.Backend
	ln       net.Listener
	pid      uint32
	secret   uint32
	cancel   chan struct{}
	mu       sync.Mutex
	received []string // the SQL of every Query and Parse, in order
	stmts    map[string]string
	portals  map[string]string
	status   byte
	skipping bool // after an error in the extended protocol, up to Sync
	// rowsFlushed: the rows of a 'rows N' query written so far.
	rowsFlushed atomic.Int64
	stopped     chan struct{}
}

func newFakeBackend(t testing.TB, conn net.Conn, sock string, pid, secret uint32) *fakeBackend {
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	b := &fakeBackend{t: t, conn: conn, be: pgproto3.NewBackend(conn, conn), ln: ln, pid: pid, secret: secret,
		cancel: make(chan struct{}, 1), stmts: map[string]string{}, portals: map[string]string{}, status: 'I', stopped: make(chan struct{})}
	go b.acceptCancels()
	go b.serve()
	return b
}

func (b *fakeBackend) close() {
	b.ln.Close()
	b.conn.Close()
	<-b.stopped
}

func (b *fakeBackend) sqls() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.received...)
}

func (b *fakeBackend) acceptCancels() {
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		var pkt [16]byte
		_, err = io.ReadFull(c, pkt[:])
		c.Close()
		if err == nil && binary.BigEndian.Uint32(pkt[4:]) == codeCancelRequest &&
			binary.BigEndian.Uint32(pkt[8:]) == b.pid && binary.BigEndian.Uint32(pkt[12:]) == b.secret {
			select {
			case b.cancel <- struct{}{}:
			default:
			}
		}
	}
}

func (b *fakeBackend) errorResponse(code, msg string) {
	b.be.Send(&pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: code, Message: msg})
	if b.status == 'T' {
		b.status = 'E'
	}
}

// run executes sql (a Query, or a portal's Execute): false when it failed.
func (b *fakeBackend) run(sql string, describe bool) bool {
	switch {
	case sql == denySQL:
		b.errorResponse("42703", `column "pgranger_denied" does not exist`)
		return false
	case strings.Contains(sql, "1/0"):
		b.errorResponse("22012", "division by zero")
		return false
	case strings.Contains(sql, "'sleep'"):
		b.be.Flush()
		select {
		case <-b.cancel:
			b.errorResponse("57014", "canceling statement due to user request")
		case <-time.After(10 * time.Second):
			b.errorResponse("XX000", "no cancel request arrived")
		}
		return false
	case strings.Contains(sql, "'rows "):
		// SELECT 'rows N': N rows of 100 bytes, written as fast as the
		// connection takes them.
		var n int
		fmt.Sscanf(sql[strings.Index(sql, "'rows ")+6:], "%d", &n)
		if describe {
			b.be.Send(&pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{{Name: []byte("x"), DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1}}})
		}
		row := []byte(strings.Repeat("x", 100))
		for i := 0; i < n; i++ {
			b.be.Send(&pgproto3.DataRow{Values: [][]byte{row}})
			if i%256 == 255 {
				if err := b.be.Flush(); err != nil {
					return false
				}
				b.rowsFlushed.Store(int64(i + 1))
			}
		}
		b.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(fmt.Sprintf("SELECT %d", n))})
		return true
	case strings.Contains(sql, "'wide "):
		var n int
		fmt.Sscanf(sql[strings.Index(sql, "'wide ")+6:], "%d", &n)
		if describe {
			b.be.Send(&pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{{Name: []byte("x"), DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1}}})
		}
		b.be.Send(&pgproto3.DataRow{Values: [][]byte{bytes.Repeat([]byte("w"), n)}})
		b.be.Send(&pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")})
		return true
	case strings.Contains(sql, "'notices'"):
		for _, n := range relayNotices {
			b.be.Send(n)
		}
	case strings.Contains(sql, "'crash'"):
		b.conn.Close()
		return false
	case strings.HasPrefix(sql, "COPY") && strings.Contains(sql, "FROM STDIN"):
		b.be.Send(&pgproto3.CopyInResponse{OverallFormat: 0, ColumnFormatCodes: []uint16{0}})
		b.be.Flush()
		n := 0
		for {
			msg, err := b.be.Receive()
			if err != nil {
				return false
			}
			switch m := msg.(type) {
			case *pgproto3.CopyData:
				n += strings.Count(string(m.Data), "\n")
			case *pgproto3.CopyDone:
				b.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(fmt.Sprintf("COPY %d", n))})
				return true
			case *pgproto3.CopyFail:
				b.errorResponse("57014", "COPY from stdin failed: "+m.Message)
				return false
			}
		}
	case strings.HasPrefix(sql, "COPY"):
		b.be.Send(&pgproto3.CopyOutResponse{OverallFormat: 0, ColumnFormatCodes: []uint16{0}})
		for i := 1; i <= 3; i++ {
			b.be.Send(&pgproto3.CopyData{Data: []byte(fmt.Sprintf("%d\n", i))})
		}
		b.be.Send(&pgproto3.CopyDone{})
		b.be.Send(&pgproto3.CommandComplete{CommandTag: []byte("COPY 3")})
		return true
	}
	for _, tag := range []string{"BEGIN", "COMMIT", "ROLLBACK", "DISCARD ALL", "SET"} {
		if strings.HasPrefix(strings.ToUpper(sql), tag) {
			switch tag {
			case "BEGIN":
				b.status = 'T'
			case "COMMIT", "ROLLBACK", "DISCARD ALL":
				b.status = 'I'
			}
			b.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(tag)})
			return true
		}
	}
	if describe {
		b.be.Send(&pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{{Name: []byte("x"), DataTypeOID: 23, DataTypeSize: 4, TypeModifier: -1}}})
	}
	b.be.Send(&pgproto3.DataRow{Values: [][]byte{[]byte("1")}})
	b.be.Send(&pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")})
	return true
}

func (b *fakeBackend) serve() {
	defer close(b.stopped)
	for {
		msg, err := b.be.Receive()
		if err != nil {
			return
		}
		if b.skipping {
			if _, ok := msg.(*pgproto3.Sync); !ok {
				continue
			}
		}
		switch m := msg.(type) {
		case *pgproto3.Query:
			b.mu.Lock()
			b.received = append(b.received, m.String)
			b.mu.Unlock()
			b.run(m.String, true)
			b.be.Send(&pgproto3.ReadyForQuery{TxStatus: b.status})
			b.be.Flush()
		case *pgproto3.Parse:
			b.mu.Lock()
			b.received = append(b.received, m.Query)
			b.mu.Unlock()
			if m.Query == denySQL {
				b.errorResponse("42703", `column "pgranger_denied" does not exist`)
				b.skipping = true
				continue
			}
			b.stmts[m.Name] = m.Query
			b.be.Send(&pgproto3.ParseComplete{})
		case *pgproto3.Bind:
			sql, ok := b.stmts[m.PreparedStatement]
			if !ok {
				b.errorResponse("26000", "prepared statement does not exist")
				b.skipping = true
				continue
			}
			b.portals[m.DestinationPortal] = sql
			b.be.Send(&pgproto3.BindComplete{})
		case *pgproto3.Describe:
			if m.ObjectType == 'S' {
				b.be.Send(&pgproto3.ParameterDescription{})
			}
			b.be.Send(&pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{{Name: []byte("x"), DataTypeOID: 23, DataTypeSize: 4, TypeModifier: -1}}})
		case *pgproto3.Execute:
			if !b.run(b.portals[m.Portal], false) {
				b.skipping = true
			}
		case *pgproto3.Close:
			if m.ObjectType == 'S' {
				delete(b.stmts, m.Name)
			} else {
				delete(b.portals, m.Name)
			}
			b.be.Send(&pgproto3.CloseComplete{})
		case *pgproto3.Sync:
			b.skipping = false
			b.be.Send(&pgproto3.ReadyForQuery{TxStatus: b.status})
			b.be.Flush()
		case *pgproto3.Flush:
			b.be.Flush()
		case *pgproto3.Terminate:
			return
		}
	}
}
