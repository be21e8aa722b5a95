//go:build !linux

package pgwire

// relayOnLoop: the event loop is Linux only (epoll).
func (s *session) relayOnLoop() (err error, used bool) { return nil, false }

// loopSession: the event loop is Linux only.
type loopSession struct{}

// mayBlock: no event loop, nothing to hand over.
func (s *session) mayBlock() {}
