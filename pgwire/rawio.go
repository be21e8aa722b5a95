package pgwire

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// rawIOConn reads and writes a socket with raw system calls from inside
// the runtime poller's RawConn callbacks.
//
// Why: a relay spends most of its time in read and write system calls on
// loopback or LAN sockets, which never block (the socket is non-blocking;
// EAGAIN parks the goroutine on the poller exactly as net.Conn does). A
// plain net.Conn enters each call as a possibly blocking system call; when
// one takes longer than sysmon's 20 µs tick — a loopback write carries the
// receiver's whole TCP input path and wakeup — the runtime hands the P to
// another thread and wakes it, and that churn of futex wakeups and spinning
// threads cost the proxy more CPU per transaction than the relaying itself
// (docs/performance.md). Raw calls keep the goroutine on its P for the
// call's few microseconds. They are recvfrom and sendto rather than read
// and write: on a socket those go straight to its protocol, without the
// file layer's position lock and checks (what pgbouncer calls too). Deadlines, Close and the poller's readiness
// waits are the net.Conn's own: only the system call differs.
type rawIOConn struct {
	net.Conn
	rc syscall.RawConn
	// nonblock: a read that finds nothing returns errWouldBlock instead
	// of waiting (the event loop's sessions, eventloop_linux.go).
	nonblock atomic.Bool
	// readOnce, in nonblock mode: after one read system call, further
	// reads return errWouldBlock without one until the loop re-arms it.
	// Under level-triggered epoll a socket that still holds data is
	// reported again, so the read that would only find EAGAIN is saved.
	readOnce, readDone atomic.Bool

	// spillMu guards spill: in nonblock mode, what a write could not
	// send without blocking. It goes out before any later byte — drained
	// by the event loop when the socket is writable again, or by the
	// first blocking write once the session left the loop — and while it
	// is not empty the loop reads nothing that would add to it (the
	// backpressure of eventloop_linux.go). It holds at most what one
	// flush of a session's 32 KiB writer could not send, or one frame
	// larger than that writer (which bufio writes through).
	spillMu sync.Mutex
	spill   []byte
	// spilling is len(spill) > 0, set under spillMu and read without
	// it: the loops ask for every frame they relay.
	spilling atomic.Bool
}

// errWouldBlock is a non-blocking read that found no data.
var errWouldBlock = errors.New("no data ready")

// withRawIO wraps TCP and Unix-socket connections; anything else (a TLS
// connection is wrapped beneath its TLS layer, where it is still TCP) is
// returned as it is.
func withRawIO(c net.Conn) net.Conn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c
	}
	switch c.(type) {
	case *net.TCPConn, *net.UnixConn:
	default:
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	return &rawIOConn{Conn: c, rc: rc}
}

// SyscallConn exposes the socket as the wrapped connection does (the
// pool's liveness peek, alive_unix.go, uses it).
func (c *rawIOConn) SyscallConn() (syscall.RawConn, error) { return c.rc, nil }

func (c *rawIOConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if c.readOnce.Load() {
		if c.readDone.Load() {
			return 0, errWouldBlock
		}
		// A read that fills p likely left more behind (a large result
		// streaming): the next read goes ahead rather than waiting for
		// another readiness report.
		n, err := c.read(p)
		if n < len(p) {
			c.readDone.Store(true)
		}
		return n, err
	}
	return c.read(p)
}

func (c *rawIOConn) read(p []byte) (int, error) {
	var n int
	var errno syscall.Errno
	err := c.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), 0, 0, 0)
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				if c.nonblock.Load() {
					errno = e
					return true
				}
				return false // wait for readiness, then call again
			}
			n, errno = int(r), e
			return true
		}
	})
	switch {
	case err != nil:
		return 0, opError("read", c.Conn, err)
	case errno == syscall.EAGAIN:
		return 0, errWouldBlock
	case errno != 0:
		return 0, opError("read", c.Conn, errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (c *rawIOConn) Write(p []byte) (int, error) {
	c.spillMu.Lock()
	defer c.spillMu.Unlock()
	if c.nonblock.Load() {
		if len(c.spill) > 0 {
			c.spill = append(c.spill, p...)
			return len(p), nil
		}
		n, blocked, err := c.writeNow(p)
		if blocked {
			c.spill = append(c.spill, p[n:]...)
			c.spilling.Store(true)
			return len(p), nil
		}
		return n, err
	}
	if len(c.spill) > 0 {
		if _, err := c.write(c.spill); err != nil {
			return 0, err
		}
		c.spill = c.spill[:0]
		c.spilling.Store(false)
	}
	return c.write(p)
}

// spilled reports whether a non-blocking write left bytes to send.
func (c *rawIOConn) spilled() bool { return c.spilling.Load() }

// drain sends what it can of the spill without blocking; done: nothing
// is left.
func (c *rawIOConn) drain() (done bool, err error) {
	c.spillMu.Lock()
	defer c.spillMu.Unlock()
	n, _, err := c.writeNow(c.spill)
	c.spill = c.spill[:copy(c.spill, c.spill[n:])]
	c.spilling.Store(len(c.spill) > 0)
	return len(c.spill) == 0, err
}

// flushSpill sends the spill, waiting for the socket as long as needed
// (a session leaving the loop, before its goroutines take over).
func (c *rawIOConn) flushSpill() error {
	c.spillMu.Lock()
	defer c.spillMu.Unlock()
	if len(c.spill) == 0 {
		return nil
	}
	_, err := c.write(c.spill)
	c.spill = nil
	c.spilling.Store(false)
	return err
}

// writeNow writes what the socket takes without waiting; blocked: it
// took less than p because its send buffer is full.
func (c *rawIOConn) writeNow(p []byte) (n int, blocked bool, err error) {
	return c.send(p, false)
}

// write writes all of p, waiting for the socket when it is full.
func (c *rawIOConn) write(p []byte) (int, error) {
	n, _, err := c.send(p, true)
	return n, err
}

// send writes p; when the send buffer is full it waits for the socket
// to drain (wait) or returns with blocked set.
func (c *rawIOConn) send(p []byte, wait bool) (n int, blocked bool, err error) {
	var errno syscall.Errno
	rerr := c.rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			r, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&p[n])), uintptr(len(p)-n), 0, 0, 0)
			switch e {
			case 0:
				n += int(r)
			case syscall.EINTR:
			case syscall.EAGAIN:
				if wait {
					return false // the runtime's poller waits for writability, then calls again
				}
				blocked = true
				return true
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case rerr != nil:
		return n, false, opError("write", c.Conn, rerr)
	case errno != 0:
		return n, false, opError("write", c.Conn, errno)
	}
	return n, blocked, nil
}

// opError shapes an error like net.Conn's own, so callers testing for
// net.ErrClosed, timeouts or EOF see what they would without rawIOConn.
func opError(op string, c net.Conn, err error) error {
	if ne, ok := err.(*net.OpError); ok {
		return ne
	}
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
