package pgwire

import (
	"io"
	"net"
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
// file layer's position lock and checks (what pgbouncer calls too).
// Deadlines, Close and the poller's readiness waits are the net.Conn's
// own: only the system call differs.
type rawIOConn struct {
	net.Conn
	rc syscall.RawConn
}

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
	var n int
	var errno syscall.Errno
	err := c.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), 0, 0, 0)
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait for readiness, then call again
			}
			n, errno = int(r), e
			return true
		}
	})
	switch {
	case err != nil:
		return 0, opError("read", c.Conn, err)
	case errno != 0:
		return 0, opError("read", c.Conn, errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write writes all of p, waiting for the socket when its send buffer is
// full.
func (c *rawIOConn) Write(p []byte) (int, error) {
	var n int
	var errno syscall.Errno
	err := c.rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			r, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&p[n])), uintptr(len(p)-n), 0, 0, 0)
			switch e {
			case 0:
				n += int(r)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // the runtime's poller waits for writability, then calls again
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return n, opError("write", c.Conn, err)
	case errno != 0:
		return n, opError("write", c.Conn, errno)
	}
	return n, nil
}

// opError shapes an error like net.Conn's own, so callers testing for
// net.ErrClosed, timeouts or EOF see what they would without rawIOConn.
func opError(op string, c net.Conn, err error) error {
	if ne, ok := err.(*net.OpError); ok {
		return ne
	}
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
