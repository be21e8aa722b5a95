package pgwire

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// rawPair is a loopback TCP connection whose accepted end is wrapped in
// rawIOConn, and the plain client end.
func rawPair(t *testing.T) (raw net.Conn, peer net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	raw = withRawIO(c)
	if _, ok := raw.(*rawIOConn); !ok {
		t.Fatalf("a TCP connection must be wrapped, got %T", raw)
	}
	if _, ok := raw.(syscall.Conn); !ok {
		t.Fatal("the wrapper must still expose its socket (the pool peeks at idle connections through it)")
	}
	t.Cleanup(func() { raw.Close(); peer.Close() })
	return raw, peer
}

// The raw calls behave as net.Conn's own: data both ways, a write larger
// than the socket buffers (EAGAIN, wait, go on), EOF, deadlines, and a
// Close that ends a blocked Read with net.ErrClosed.
func TestRawIOConnBehavesAsNetConn(t *testing.T) {
	t.Run("both ways and a large write", func(t *testing.T) {
		raw, peer := rawPair(t)
		big := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB: far beyond loopback's buffers
		done := make(chan error, 1)
		go func() {
			n, err := raw.Write(big)
			if err == nil && n != len(big) {
				err = io.ErrShortWrite
			}
			done <- err
		}()
		got := make([]byte, len(big))
		if _, err := io.ReadFull(peer, got); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("write: %v", err)
		}
		if !bytes.Equal(got, big) {
			t.Fatal("the bytes read differ from those written")
		}
		peer.Write([]byte("pong"))
		buf := make([]byte, 16)
		n, err := raw.Read(buf)
		if err != nil || string(buf[:n]) != "pong" {
			t.Fatalf("read %q, %v", buf[:n], err)
		}
	})
	t.Run("EOF when the peer closes", func(t *testing.T) {
		raw, peer := rawPair(t)
		peer.Close()
		if n, err := raw.Read(make([]byte, 8)); n != 0 || err != io.EOF {
			t.Fatalf("read after the peer closed: %d, %v; want 0, io.EOF", n, err)
		}
	})
	t.Run("read deadline", func(t *testing.T) {
		raw, _ := rawPair(t)
		raw.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		_, err := raw.Read(make([]byte, 8))
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read past its deadline: %v; want a timeout", err)
		}
	})
	t.Run("write deadline with a peer that does not read", func(t *testing.T) {
		raw, _ := rawPair(t)
		raw.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		_, err := raw.Write(make([]byte, 64<<20))
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("write past its deadline: %v; want a timeout", err)
		}
	})
	t.Run("Close ends a blocked Read", func(t *testing.T) {
		raw, _ := rawPair(t)
		done := make(chan error, 1)
		go func() { _, err := raw.Read(make([]byte, 8)); done <- err }()
		time.Sleep(50 * time.Millisecond)
		raw.Close()
		select {
		case err := <-done:
			if !errors.Is(err, net.ErrClosed) {
				t.Fatalf("read on a closed connection: %v; want net.ErrClosed", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Close did not end the blocked Read")
		}
	})
	t.Run("connection reset", func(t *testing.T) {
		raw, peer := rawPair(t)
		peer.(*net.TCPConn).SetLinger(0) // close with RST
		peer.Close()
		time.Sleep(20 * time.Millisecond)
		_, err := raw.Read(make([]byte, 8))
		if err == nil || err == io.EOF {
			t.Fatalf("read after a reset: %v; want an error", err)
		}
	})
}

func TestRawIOLeavesOtherConnectionsAlone(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if c := withRawIO(a); c != a {
		t.Fatalf("a net.Pipe end has no socket: it must come back unwrapped, got %T", c)
	}
}
