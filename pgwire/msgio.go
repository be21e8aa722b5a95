package pgwire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Messages are relayed as raw frames: a type byte, a 4-byte length that
// counts itself, and the body. Only the few kinds pgranger must look inside
// are decoded; DataRows and the rest pass through byte for byte.

var errMessageTooLarge = errors.New("message exceeds listen.max-message-bytes")

// msgReader reads frames from a buffered connection. The body returned by
// next stays valid until the following call.
type msgReader struct {
	r   *bufio.Reader
	max int
	hdr [5]byte
	buf []byte
}

func newMsgReader(r *bufio.Reader, max int) *msgReader {
	return &msgReader{r: r, max: max, buf: make([]byte, 0, 8192)}
}

func (m *msgReader) next() (byte, []byte, error) {
	if _, err := io.ReadFull(m.r, m.hdr[:]); err != nil {
		return 0, nil, err
	}
	n := int(binary.BigEndian.Uint32(m.hdr[1:])) - 4
	if n < 0 {
		return 0, nil, fmt.Errorf("invalid message length %d", n+4)
	}
	if n > m.max {
		return 0, nil, errMessageTooLarge
	}
	if cap(m.buf) < n {
		m.buf = make([]byte, n)
	}
	m.buf = m.buf[:n]
	if _, err := io.ReadFull(m.r, m.buf); err != nil {
		return 0, nil, err
	}
	return m.hdr[0], m.buf, nil
}

// buffered reports whether more input is already waiting; writers flush
// only when it is not, so a pipeline of messages costs one write.
func (m *msgReader) buffered() bool { return m.r.Buffered() > 0 }

// readStartup reads an untyped startup-phase packet (length + body).
func readStartup(r *bufio.Reader, max int) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(hdr[:])) - 4
	if n < 4 || n > max {
		return nil, fmt.Errorf("invalid startup packet length %d", n+4)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return body, nil
}

// writeFrame buffers one frame. The header goes in byte by byte: a header
// array handed to Write would escape to the heap, one allocation per
// relayed DataRow (BenchmarkRelayResult). bufio's errors are sticky, so
// the last Write reports any.
func writeFrame(w *bufio.Writer, typ byte, body []byte) error {
	n := uint32(len(body) + 4)
	w.WriteByte(typ)
	w.WriteByte(byte(n >> 24))
	w.WriteByte(byte(n >> 16))
	w.WriteByte(byte(n >> 8))
	w.WriteByte(byte(n))
	_, err := w.Write(body)
	return err
}

// writeQuery writes a simple Query of sql, as writeMsg of a
// pgproto3.Query would, without building the message first (a rewritten
// simple-protocol statement, per statement).
func writeQuery(w *bufio.Writer, sql string) error {
	n := uint32(len(sql) + 5)
	w.WriteByte('Q')
	w.WriteByte(byte(n >> 24))
	w.WriteByte(byte(n >> 16))
	w.WriteByte(byte(n >> 8))
	w.WriteByte(byte(n))
	w.WriteString(sql)
	return w.WriteByte(0)
}

// encoder is any pgproto3 message.
type encoder interface {
	Encode(dst []byte) ([]byte, error)
}

func writeMsg(w *bufio.Writer, msg encoder) error {
	b, err := msg.Encode(nil)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// cstring splits a NUL-terminated string off the front of b.
func cstring(b []byte) (string, []byte, bool) {
	for i, c := range b {
		if c == 0 {
			return string(b[:i]), b[i+1:], true
		}
	}
	return "", nil, false
}

// cstringBytes is cstring without the copy: the name aliases b.
func cstringBytes(b []byte) ([]byte, bool) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return nil, false
	}
	return b[:i], true
}
