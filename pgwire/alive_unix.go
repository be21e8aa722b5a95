//go:build linux || darwin || freebsd || netbsd || openbsd

package pgwire

import (
	"crypto/tls"
	"syscall"
)

// alive reports whether an idle pooled connection is still usable, without
// a round trip to the backend: an idle backend sends nothing, so anything
// readable — PostgreSQL's FATAL error when it was terminated, or the end
// of the stream — means it is gone. The socket is peeked without blocking.
func (bc *backendConn) alive() bool {
	if bc.r.Buffered() > 0 {
		return false
	}
	conn := bc.conn
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn()
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return true // nothing to peek at; a dead one fails at first use
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := true
	var buf [1]byte
	err = raw.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK || err == syscall.EINTR:
			// Nothing to read: the connection is quiet, as an idle one is.
		default:
			// An error, the end of the stream, or data nobody
			// asked for.
			alive = false
		}
		return true // never wait for readability
	})
	return err == nil && alive
}
