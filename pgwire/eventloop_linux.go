//go:build linux

package pgwire

import (
	"encoding/binary"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The event loop (listen.event-loop, a prototype, off by default) relays
// sessions in their steady state without their two goroutines: a few
// loops (GOMAXPROCS) wait on epoll for every registered socket and, when
// one is readable, read what it holds without blocking and hand each
// complete message to the same code the goroutines run (forwardClient,
// relayBackend). One wake-up serves every ready socket, and a socket is
// read only when it is readable.
//
// Everything that is not the steady state leaves the loop for good and
// goes on in the session's goroutines, from exactly where the loop
// stopped (the buffered readers are shared): a frame larger than the
// read buffer, any lifecycle transition (revocation, an end by pgranger,
// the token deadline), the client's Terminate or a protocol error, a
// connection that ends. Known limits of the prototype: a write to a full
// socket, and a catalog reload during a rewrite, block the loop (and so
// its other sessions) until they complete.

type eventLoop struct {
	epfd, evfd int

	mu       sync.Mutex
	byFD     map[int]*loopSession
	ejecting []*loopSession
}

// loopSession is a session registered on a loop.
type loopSession struct {
	s          *session
	loop       *eventLoop
	cfd, bfd   int
	ccon, bcon *rawIOConn
	working    bool       // life.begin ran for the batch being handled (the loop's clientLoop "working")
	out        bool       // left the loop (loop goroutine only)
	left       chan error // why it left: nil to go on, else what the client loop would have returned
}

var (
	// loopRegistered counts the sessions that started on a loop (tests).
	loopRegistered atomic.Int64

	loopsOnce sync.Once
	loops     []*eventLoop
	loopNext  atomic.Uint32
)

func eventLoops() []*eventLoop {
	loopsOnce.Do(func() {
		for i := 0; i < runtime.GOMAXPROCS(0); i++ {
			l, err := newEventLoop()
			if err != nil {
				return
			}
			loops = append(loops, l)
			go l.run()
		}
	})
	return loops
}

func newEventLoop() (*eventLoop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	evfd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, err
	}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, evfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(evfd)}); err != nil {
		unix.Close(epfd)
		unix.Close(evfd)
		return nil, err
	}
	return &eventLoop{epfd: epfd, evfd: evfd, byFD: map[int]*loopSession{}}, nil
}

// rawOf is the raw socket under a client or backend connection, nil for
// anything else (TLS, an in-memory pipe).
func rawOf(c net.Conn) *rawIOConn {
	switch c := c.(type) {
	case *rawIOConn:
		return c
	case *countingConn:
		r, _ := c.Conn.(*rawIOConn)
		return r
	}
	return nil
}

func fdOf(c *rawIOConn) int {
	fd := -1
	c.rc.Control(func(f uintptr) { fd = int(f) })
	return fd
}

// relayOnLoop relays the session on an event loop until it leaves it.
// used is false when the session cannot run on one (then nothing was
// done); err is what the client loop would have returned, nil for the
// goroutines to go on.
func (s *session) relayOnLoop() (err error, used bool) {
	ls := loopSessionFor(s)
	if ls == nil {
		return nil, false
	}
	return <-ls.left, true
}

func loopSessionFor(s *session) *loopSession {
	ccon, bcon := rawOf(s.client), rawOf(s.bc.conn)
	if ccon == nil || bcon == nil || s.cr.buffered() || s.br.buffered() {
		return nil
	}
	all := eventLoops()
	if len(all) == 0 {
		return nil
	}
	l := all[loopNext.Add(1)%uint32(len(all))]
	ls := &loopSession{s: s, loop: l, cfd: fdOf(ccon), bfd: fdOf(bcon), ccon: ccon, bcon: bcon, left: make(chan error, 1)}
	if ls.cfd < 0 || ls.bfd < 0 {
		return nil
	}
	s.life.mu.Lock()
	s.life.wake = func() { l.eject(ls) }
	s.life.mu.Unlock()
	if !s.life.steady() {
		return nil
	}
	ccon.nonblock.Store(true)
	bcon.nonblock.Store(true)
	ccon.readOnce.Store(true)
	bcon.readOnce.Store(true)
	l.mu.Lock()
	l.byFD[ls.cfd], l.byFD[ls.bfd] = ls, ls
	errC := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, ls.cfd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(ls.cfd)})
	errB := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, ls.bfd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(ls.bfd)})
	l.mu.Unlock()
	if errC != nil || errB != nil {
		l.eject(ls)
	}
	loopRegistered.Add(1)
	return ls
}

// epollPoll is epoll_pwait (no signal mask: epoll_wait, which arm64
// lacks) with a zero timeout, made as a raw system call
// (it cannot block).
func epollPoll(epfd int, events []unix.EpollEvent) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// eject asks the loop to let the session go (any goroutine).
func (l *eventLoop) eject(ls *loopSession) {
	l.mu.Lock()
	l.ejecting = append(l.ejecting, ls)
	l.mu.Unlock()
	var one [8]byte
	one[7] = 1
	unix.Write(l.evfd, one[:])
}

func (l *eventLoop) run() {
	events := make([]unix.EpollEvent, 256)
	for {
		// Without blocking first: a busy loop finds events waiting and
		// never enters a blocking system call, whose P the runtime would
		// hand to another thread.
		n, err := epollPoll(l.epfd, events)
		if n == 0 && err == nil {
			n, err = unix.EpollWait(l.epfd, events, -1)
		}
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			return
		}
		for _, ev := range events[:n] {
			fd := int(ev.Fd)
			if fd == l.evfd {
				var b [8]byte
				unix.Read(l.evfd, b[:])
				continue
			}
			l.mu.Lock()
			ls := l.byFD[fd]
			l.mu.Unlock()
			if ls == nil || ls.out {
				continue
			}
			var leave bool
			var err error
			if fd == ls.cfd {
				ls.ccon.readDone.Store(false) // one read per readiness
				leave, err = ls.clientReady()
			} else {
				ls.bcon.readDone.Store(false)
				leave = ls.backendReady()
			}
			if leave {
				l.leave(ls, err)
			}
		}
		l.mu.Lock()
		ej := l.ejecting
		l.ejecting = nil
		l.mu.Unlock()
		for _, ls := range ej {
			if !ls.out {
				l.leave(ls, nil)
			}
		}
	}
}

// leave takes the session off the loop and hands it to its goroutines.
func (l *eventLoop) leave(ls *loopSession, err error) {
	ls.out = true
	l.mu.Lock()
	for _, fd := range []int{ls.cfd, ls.bfd} {
		if l.byFD[fd] == ls { // not a newer session's, after a close let the number be reused
			unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, fd, nil)
			delete(l.byFD, fd)
		}
	}
	l.mu.Unlock()
	ls.ccon.readOnce.Store(false)
	ls.bcon.readOnce.Store(false)
	ls.ccon.nonblock.Store(false)
	ls.bcon.nonblock.Store(false)
	if ls.working && err == nil {
		ls.working = false
		ls.s.settle(0, true)
	}
	ls.left <- err
}

// framed reports whether r holds a whole frame; leave: the loop cannot
// take it (too large for the buffer, an error or the end of the stream:
// the goroutines meet it again), wait: nothing more to read now.
func framed(m *msgReader) (ok, wait, leave bool) {
	hdr, err := m.r.Peek(5)
	if err == nil {
		n := int(binary.BigEndian.Uint32(hdr[1:])) - 4
		if n < 0 || n > m.max || 5+n > m.r.Size() {
			return false, false, true
		}
		if _, err = m.r.Peek(5 + n); err == nil {
			return true, false, false
		}
	}
	if err == errWouldBlock {
		return false, true, false
	}
	return false, false, true
}

// clientReady handles what the client sent: clientLoop's steady state.
func (ls *loopSession) clientReady() (leave bool, err error) {
	s := ls.s
	for {
		ok, wait, out := framed(s.cr)
		switch {
		case out:
			return true, nil
		case wait:
			if ls.working {
				ls.working = false
				s.settle(0, true)
			}
			if !s.life.steady() {
				return true, nil
			}
			if err := s.bc.w.Flush(); err != nil {
				return true, err
			}
			return false, nil
		case ok:
			if !s.life.steady() || s.pastDeadline() {
				return true, nil // the goroutines take the transition
			}
			if !ls.working {
				if s.life.begin() != handle {
					return true, nil
				}
				ls.working = true
			}
			typ, body, _ := s.cr.next()
			if err := s.forwardClient(typ, body); err != nil {
				return true, err
			}
		}
	}
}

// backendReady relays what the backend sent: backendLoop's steady state.
func (ls *loopSession) backendReady() (leave bool) {
	s := ls.s
	for {
		ok, wait, out := framed(s.br)
		switch {
		case out:
			return true
		case wait:
			s.cwMu.Lock()
			s.cw.Flush()
			s.cwMu.Unlock()
			return false
		case ok:
			typ, body, _ := s.br.next()
			if s.relayBackend(typ, body) {
				return true
			}
		}
	}
}
