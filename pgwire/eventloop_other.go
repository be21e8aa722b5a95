//go:build !linux

package pgwire

// relayOnLoop: the event loop is Linux only (epoll).
func (s *session) relayOnLoop() (err error, used bool) { return nil, false }
