//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package pgwire

// alive cannot peek at the socket on this platform; a connection whose
// backend went away fails at its first use instead.
func (bc *backendConn) alive() bool { return bc.r.Buffered() == 0 }
