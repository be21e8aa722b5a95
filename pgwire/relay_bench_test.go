package pgwire

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net"
	"testing"

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
	s.queue.push(&pending{kind: 'Q'})
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
