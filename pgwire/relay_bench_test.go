package pgwire

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgranger/pgranger/config"
	"github.com/pgranger/pgranger/identity"
)

// resultStream is a backend's answer to a query returning rows rows.
func resultStream(rows int) []byte {
	var stream []byte
	stream, _ = (&pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{
		{Name: []byte("id"), DataTypeOID: 23, DataTypeSize: 4, TypeModifier: -1},
		{Name: []byte("ssn"), DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1},
	}}).Encode(stream)
	for i := 0; i < rows; i++ {
		stream, _ = (&pgproto3.DataRow{Values: [][]byte{[]byte("12345"), []byte("xxx-xx-1111")}}).Encode(stream)
	}
	stream, _ = (&pgproto3.CommandComplete{CommandTag: []byte("SELECT")}).Encode(stream)
	stream, _ = (&pgproto3.ReadyForQuery{TxStatus: 'I'}).Encode(stream)
	return stream
}

// relayer runs the backend loop over a recorded stream, writing to a
// discarding client.
type relayer struct {
	client net.Conn
	src    *bytes.Reader
	br     *bufio.Reader
	cw     *bufio.Writer
}

func newRelayer(t testing.TB) *relayer {
	client, far := net.Pipe()
	go io.Copy(io.Discard, far)
	t.Cleanup(func() { client.Close() })
	src := bytes.NewReader(nil)
	return &relayer{client: client, src: src, br: bufio.NewReaderSize(src, 32<<10), cw: bufio.NewWriterSize(io.Discard, 32<<10)}
}

func (r *relayer) relay(stream []byte) {
	r.src.Reset(stream)
	r.br.Reset(r.src)
	s := &session{srv: &Server{cfg: &config.Config{}, log: slog.New(slog.DiscardHandler)}, id: &identity.Identity{}, client: r.client, cw: r.cw, bc: &backendConn{r: r.br}, br: newMsgReader(r.br, 1<<30)}
	s.life.init()
	s.queue.push(pending{kind: 'Q'})
	// The loop ends when the stream does (io.EOF reads as a lost backend),
	// after relaying the whole result.
	s.backendLoop()
}

// BenchmarkRelayResult relays one 10,000-row result (RowDescription,
// DataRows, CommandComplete, ReadyForQuery) through the backend loop to
// the client writer.
func BenchmarkRelayResult(b *testing.B) {
	const rows = 10000
	stream := resultStream(rows)
	r := newRelayer(b)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r.relay(stream)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
}

// TestRelayAllocationsDoNotGrowWithRows: DataRows are forwarded as raw
// frames, so relaying 10,000 rows allocates no more than relaying 10.
func TestRelayAllocationsDoNotGrowWithRows(t *testing.T) {
	r := newRelayer(t)
	small, large := resultStream(10), resultStream(10000)
	few := testing.AllocsPerRun(5, func() { r.relay(small) })
	many := testing.AllocsPerRun(5, func() { r.relay(large) })
	if many > few+2 {
		t.Errorf("relaying 10,000 rows allocates %.0f times, 10 rows %.0f: something allocates per row", many, few)
	}
}

// BenchmarkRelayPreparedRoundTrip is pgbench -S -M prepared through a
// whole session over in-memory connections: Bind, Execute and Sync of a
// prepared statement, one row back, per iteration. It measures what the
// proxy spends per statement apart from the sockets (net.Pipe stands in
// for them, so its goroutine handoffs are in the numbers too).
func BenchmarkRelayPreparedRoundTrip(b *testing.B) {
	h := newRelayHarness(b)
	h.send(&pgproto3.Parse{Name: "s", Query: "SELECT id FROM t WHERE id = $1", ParameterOIDs: []uint32{23}}, &pgproto3.Sync{})
	h.until("Z:I")
	h.client.SetDeadline(time.Time{})
	bind := &pgproto3.Bind{PreparedStatement: "s", ParameterFormatCodes: []int16{0}, Parameters: [][]byte{[]byte("1")}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.fe.Send(bind)
		h.fe.Send(&pgproto3.Execute{})
		h.fe.Send(&pgproto3.Sync{})
		if err := h.fe.Flush(); err != nil {
			b.Fatal(err)
		}
		for {
			m, err := h.fe.Receive()
			if err != nil {
				b.Fatal(err)
			}
			if _, ok := m.(*pgproto3.ReadyForQuery); ok {
				break
			}
		}
	}
	b.StopTimer()
	h.terminate()
}

// BenchmarkRelayStatementBookkeeping is what pgranger itself spends per
// statement of pgbench -S -M prepared, without sockets: the handlers the
// two loops run for one statement — forwardClient for its Bind, Execute
// and Sync (to a discarding backend writer), then relayBackend for
// BindComplete, DataRow, CommandComplete and ReadyForQuery (to a
// discarding client writer) — a statement at a time. ns/op is per
// statement.
func BenchmarkRelayStatementBookkeeping(b *testing.B) {
	s := bookkeepingSession(b)
	parse, _ := (&pgproto3.Parse{Name: "s", Query: "SELECT id FROM t WHERE id = $1", ParameterOIDs: []uint32{23}}).Encode(nil)
	if err := s.parse(parse[5:]); err != nil {
		b.Fatal(err)
	}
	s.queue.pop()
	if s.stmts["s"] == nil || s.stmts["s"].result.Err != nil {
		b.Fatal("the statement was not prepared")
	}
	in := frames(b, &pgproto3.Bind{PreparedStatement: "s", ParameterFormatCodes: []int16{0}, Parameters: [][]byte{[]byte("1")}},
		&pgproto3.Execute{}, &pgproto3.Sync{})
	out := frames(b, &pgproto3.BindComplete{}, &pgproto3.DataRow{Values: [][]byte{[]byte("1")}},
		&pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")}, &pgproto3.ReadyForQuery{TxStatus: 'I'})
	runBookkeeping(b, s, [][]frame{in}, out)
}

// BenchmarkRelaySimpleBookkeeping is the same for pgbench -S -M simple: a
// Query with a new constant each time (the rewriter's literal-template
// path), answered by RowDescription, DataRow, CommandComplete and
// ReadyForQuery.
func BenchmarkRelaySimpleBookkeeping(b *testing.B) {
	s := bookkeepingSession(b)
	var in [][]frame
	for i := 0; i < 1000; i++ {
		in = append(in, frames(b, &pgproto3.Query{String: "SELECT id FROM t WHERE id = " + strconv.Itoa(i+1) + ";"}))
	}
	if res := s.rewrite(string(in[0][0].body[:len(in[0][0].body)-1])); res.Err != nil {
		b.Fatal(res.Err)
	}
	out := frames(b, &pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{{Name: []byte("id"), TableOID: 2001, TableAttributeNumber: 1, DataTypeOID: 23, DataTypeSize: 4, TypeModifier: -1}}},
		&pgproto3.DataRow{Values: [][]byte{[]byte("1")}}, &pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")}, &pgproto3.ReadyForQuery{TxStatus: 'I'})
	runBookkeeping(b, s, in, out)
}

// bookkeepingSession is a live session of the relay harness's server,
// policies and catalog whose two writers discard.
func bookkeepingSession(b *testing.B) *session {
	h := newRelayHarness(b)
	h.terminate() // only its server, policies and catalog are used
	s := newSession(h.srv, h.sess.client, bufio.NewReader(bytes.NewReader(nil)), bufio.NewWriterSize(io.Discard, 32<<10),
		&backendConn{conn: h.sess.client, w: bufio.NewWriterSize(io.Discard, 32<<10), pool: h.pool, params: map[string]string{}},
		h.sess.id, "postgres", h.sess.cat)
	s.rsess.DefaultSearchPath = []string{"$user", "public"}
	s.paths.current = s.rsess.DefaultSearchPath // as startup sets them: t resolves to public.t
	s.life.start()
	return s
}

type frame struct {
	typ  byte
	body []byte
}

func frames(b *testing.B, msgs ...interface{ Encode([]byte) ([]byte, error) }) []frame {
	var out []frame
	for _, m := range msgs {
		buf, err := m.Encode(nil)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, frame{buf[0], buf[5:]})
	}
	return out
}

// runBookkeeping handles one statement per iteration, taking the client
// messages of each in turn from ins.
func runBookkeeping(b *testing.B, s *session, ins [][]frame, out []frame) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bookkeepingRound(b, s, ins[i%len(ins)], out)
	}
}

// bookkeepingRound is one statement as the loops handle it: a batch of
// client messages begun once and settled (clientLoop), then the backend's
// answers (backendLoop).
func bookkeepingRound(b *testing.B, s *session, in, out []frame) {
	if s.life.begin() != handle {
		b.Fatal("the session does not handle messages")
	}
	for _, f := range in {
		if err := s.forwardClient(f.typ, f.body); err != nil {
			b.Fatal(err)
		}
	}
	s.settle(0, true)
	for _, f := range out {
		if s.relayBackend(f.typ, f.body) {
			b.Fatal("the relay ended")
		}
	}
	if !s.queue.empty() {
		b.Fatal("answers and pending entries disagree")
	}
}
