package pgwire

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// chunked delivers its data a few KiB per read and reports "would block"
// between chunks, as a non-blocking socket does between readiness
// reports; once blocking is set it delivers the rest.
type chunked struct {
	data     []byte
	chunk    int
	ready    bool // one read may deliver
	blocking bool
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, errWouldBlock
	}
	if !c.ready && !c.blocking {
		return 0, errWouldBlock
	}
	c.ready = false
	n := min(len(p), c.chunk, len(c.data))
	if c.blocking {
		n = min(len(p), len(c.data))
	}
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// A frame larger than the read buffer is assembled across readiness
// reports; the goroutines' next completes one the loop began; frames
// after it are read as before.
func TestFramedAssemblesLargeFrames(t *testing.T) {
	big := strings.Repeat("z", 100000)
	var stream []byte
	stream, _ = (&pgproto3.Query{String: big}).Encode(stream)
	stream, _ = (&pgproto3.Query{String: "SELECT 1"}).Encode(stream)
	stream, _ = (&pgproto3.Query{String: big + "!"}).Encode(stream)
	stream, _ = (&pgproto3.Sync{}).Encode(stream)
	src := &chunked{data: stream, chunk: 4096}
	m := newMsgReader(bufio.NewReaderSize(src, 32<<10), 1<<20)

	var reports int
	frame := func() (byte, []byte) {
		t.Helper()
		for {
			ok, wait, leave := framed(m)
			switch {
			case leave:
				t.Fatal("framed left")
			case ok:
				typ, body, err := m.next()
				if err != nil {
					t.Fatal(err)
				}
				return typ, body
			case wait:
				reports++
				src.ready = true // the next readiness report
			}
		}
	}
	if typ, body := frame(); typ != 'Q' || string(body) != big+"\x00" {
		t.Fatalf("first frame: %c, %d bytes", typ, len(body))
	}
	if reports < 100000/4096 {
		t.Errorf("the large frame took %d readiness reports; want one per %d-byte read", reports, 4096)
	}
	if typ, body := frame(); typ != 'Q' || string(body) != "SELECT 1\x00" {
		t.Fatalf("second frame: %c %q", typ, body)
	}
	// The loop begins the third frame, then the session leaves: next, in
	// blocking mode, reads the rest of it.
	src.ready = true
	for i := 0; i < 3; i++ {
		if ok, wait, leave := framed(m); ok || leave || !wait {
			t.Fatalf("framed = %v %v %v mid-frame", ok, wait, leave)
		}
		src.ready = true
	}
	if m.have <= 0 || !m.buffered() {
		t.Fatalf("no frame under way (have %d)", m.have)
	}
	src.blocking = true
	if typ, body, err := m.next(); err != nil || typ != 'Q' || !bytes.Equal(body, []byte(big+"!\x00")) {
		t.Fatalf("third frame: %c, %d bytes, %v", typ, len(body), err)
	}
	if typ, _, err := m.next(); err != nil || typ != 'S' {
		t.Fatalf("after it: %c, %v", typ, err)
	}
}
