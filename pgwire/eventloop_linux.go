//go:build linux

package pgwire

import (
	"encoding/binary"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The event loop (listen.event-loop) relays sessions in their steady
// state without their two goroutines: a few loops (listen.event-loops)
// each hold an epoll set of their sessions' sockets and, when one is
// readable, read what it holds without blocking and hand each complete
// message to the same code the goroutines run (forwardClient,
// relayBackend). One wake-up serves every ready socket, and a socket is
// read only when it is readable.
//
// A loop waits as a goroutine, not as a thread: its epoll descriptor is
// itself registered with the runtime's poller, so an idle loop parks
// like any goroutine and no loop ever sits in a blocking system call.
// (Blocking in epoll_wait made the runtime's monitor retake the loop's
// processor and preempt it every 10 ms, which cost more than the
// goroutines it replaced: docs/performance.md.)
//
// Writes never block a loop. What a socket does not take goes to its
// connection's spill (rawio.go); while a client's spill is not empty the
// loop stops reading that session's backend, and while the backend's is
// not empty it stops reading the client, and it waits for the full
// socket to be writable (EPOLLOUT) to drain it. A client that reads
// slowly costs its own session a bounded buffer and nothing else.
//
// Everything that is not the steady state leaves the loop for good and
// goes on in the session's goroutines, from exactly where the loop
// stopped (the buffered readers are shared, a frame the loop began is
// finished by the goroutines' reader, and a spill is sent before anything
// the goroutines write): any lifecycle transition (revocation, an end by
// pgranger, the token deadline), the client's Terminate or a protocol
// error, a connection that ends. A frame larger than the read buffer (a
// wide row, a long statement) stays on the loop: it is assembled a read
// at a time (framed).
//
// A handler that may take long — a rewrite that must parse and analyse
// a statement the caches do not hold (milliseconds for a large one), a
// forced catalog reload during it (session.mayBlock, through the
// rewriter's Env.Analysing and Env.Refresh) — takes the loop's goroutine
// with it, as the
// runtime hands a processor over when a thread blocks in a system call:
// the session's sockets leave the epoll set, a new goroutine carries on
// the loop for its other sessions, and once the handler returns the old
// goroutine registers the session again (or lets it leave) and ends.
// Nothing is reordered: while it is detached nothing else reads or
// writes for the session, and what arrived meanwhile is reported as soon
// as its sockets are back in the set. A rewrite served from the caches
// (the exact text, or its literal template) stays on the loop.

type eventLoop struct {
	epfd, evfd int
	// epf is epfd as the runtime's poller knows it (nil: waits block in
	// epoll_wait instead); kept so its finalizer never closes epfd.
	epf *os.File

	mu        sync.Mutex
	broken    bool // the loop stopped (abandon): it takes no session
	byFD      map[int]*loopSession
	ejecting  []*loopSession
	returning []returning
}

// returning is a detached session given back to its loop, with what its
// handlers ended with.
type returning struct {
	ls    *loopSession
	leave bool
	err   error
}

// loopSession is a session registered on a loop.
type loopSession struct {
	s          *session
	loop       *eventLoop
	cfd, bfd   int
	ccon, bcon *rawIOConn
	working    bool   // life.begin ran for the batch being handled (the loop's clientLoop "working")
	out        bool   // left the loop (loop goroutine only)
	cev, bev   uint32 // the epoll events each socket is registered for now (loop goroutine only)
	// detached: a handler of the session may wait, and the goroutine
	// running it no longer serves the loop (set and cleared by that
	// goroutine; the loop's new goroutine reads it).
	detached atomic.Bool
	left     chan error // why it left: nil to go on, else what the client loop would have returned
}

var (
	// loopRegistered counts the sessions that started on a loop,
	// loopHandovers the loops handed to a new goroutine by a session that
	// may wait, and loopLeft the sessions that left a loop for their
	// goroutines (tests).
	loopRegistered, loopHandovers, loopLeft atomic.Int64

	loopsOnce sync.Once
	loops     []*eventLoop
	loopNext  atomic.Uint32
)

// loopCount is listen.event-loops, 0 choosing: half of GOMAXPROCS, at
// least one. With fewer loops than processors, a wake-up finds more
// ready sockets, and PostgreSQL on the same host keeps a core.
func loopCount(n int) int {
	if n > 0 {
		return n
	}
	return max(1, runtime.GOMAXPROCS(0)/2)
}

func eventLoops(n int) []*eventLoop {
	loopsOnce.Do(func() {
		for i := 0; i < loopCount(n); i++ {
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
	l := &eventLoop{epfd: epfd, evfd: evfd, byFD: map[int]*loopSession{}}
	// An epoll descriptor is readable while its set has ready events, so
	// the runtime's poller can wait on it for the loop. os.NewFile
	// registers a non-blocking descriptor with the poller.
	if unix.SetNonblock(epfd, true) == nil {
		l.epf = os.NewFile(uintptr(epfd), "epoll")
	}
	return l, nil
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
	all := eventLoops(s.srv.cfg.Listen.EventLoops)
	if len(all) == 0 {
		return nil
	}
	l := all[loopNext.Add(1)%uint32(len(all))]
	l.mu.Lock()
	broken := l.broken
	l.mu.Unlock()
	if broken {
		return nil
	}
	ls := &loopSession{s: s, loop: l, cfd: fdOf(ccon), bfd: fdOf(bcon), ccon: ccon, bcon: bcon, left: make(chan error, 1)}
	if ls.cfd < 0 || ls.bfd < 0 {
		return nil
	}
	s.loop = ls
	s.life.mu.Lock()
	s.life.wake = func() { l.eject(ls) }
	s.life.mu.Unlock()
	if !s.life.steady() {
		s.loop = nil
		return nil
	}
	ccon.nonblock.Store(true)
	bcon.nonblock.Store(true)
	ccon.readOnce.Store(true)
	bcon.readOnce.Store(true)
	ls.cev, ls.bev = readable, readable
	l.mu.Lock()
	l.byFD[ls.cfd], l.byFD[ls.bfd] = ls, ls
	errC := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, ls.cfd, &unix.EpollEvent{Events: readable, Fd: int32(ls.cfd)})
	errB := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, ls.bfd, &unix.EpollEvent{Events: readable, Fd: int32(ls.bfd)})
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
	l.wake()
}

// wake makes the loop's wait return (any goroutine).
func (l *eventLoop) wake() {
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1) // the eventfd counter is a host-order uint64
	unix.Write(l.evfd, one[:])
}

// The epoll events a socket is registered for: readable when the loop
// reads it, writable while its spill waits, nothing while the loop holds
// back reading it (hang-ups and errors are reported regardless).
const (
	readable = unix.EPOLLIN | unix.EPOLLRDHUP
	writable = unix.EPOLLOUT
	// unregistered: the socket is not in the set (a detached session).
	unregistered = ^uint32(0)
)

// wait returns the next ready events, parking the loop's goroutine on
// the runtime's poller until there are some.
func (l *eventLoop) wait(events []unix.EpollEvent) (int, error) {
	if l.epf == nil {
		n, err := epollPoll(l.epfd, events)
		if n == 0 && err == nil {
			n, err = unix.EpollWait(l.epfd, events, -1)
		}
		return n, err
	}
	rc, err := l.epf.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var perr error
	err = rc.Read(func(uintptr) bool {
		n, perr = epollPoll(l.epfd, events)
		return n > 0 || (perr != nil && perr != unix.EINTR)
	})
	if err != nil {
		return 0, err
	}
	return n, perr
}

func (l *eventLoop) run() {
	events := make([]unix.EpollEvent, 256)
	for {
		// Before waiting: what was asked of the loop — sessions given
		// back after a wait, sessions to let go. First of all for a
		// goroutine that takes the loop over from one that went with a
		// session, which may have consumed the eventfd's wake-up for
		// them and then left its batch unfinished.
		l.chores()
		n, err := l.wait(events)
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			// The loop cannot wait any more (it should not happen):
			// its sessions go on on their goroutines, new ones are not
			// given to it.
			l.abandon()
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
			if ls == nil || ls.out {
				// Registered after its session left (a transition while
				// it was being registered): no session of this loop
				// reads it, and a level-triggered report would repeat.
				unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, fd, nil)
				if ls != nil {
					delete(l.byFD, fd)
				}
				l.mu.Unlock()
				continue
			}
			l.mu.Unlock()
			leave, err := ls.ready(fd, ev.Events)
			if ls.detached.Load() {
				// This goroutine went with the session; another serves
				// the loop now.
				l.reattach(ls, leave, err)
				return
			}
			if !leave {
				leave, err = ls.rearm()
			}
			if leave {
				l.leave(ls, err)
			}
		}
	}
}

// chores takes back the sessions whose wait ended and lets go the
// sessions asked to leave (loop goroutine).
func (l *eventLoop) chores() {
	l.returned()
	l.mu.Lock()
	ej := l.ejecting
	l.ejecting = nil
	l.mu.Unlock()
	for _, ls := range ej {
		// A detached session is not touched: the goroutine running it
		// sees the transition when it gives the session back.
		if !ls.out && !ls.detached.Load() {
			l.leave(ls, nil)
		}
	}
}

// mayBlock is called by a handler before something that may wait. On an
// event loop the session's sockets leave the epoll set and a new
// goroutine carries on the loop; the caller's goroutine stays with the
// session (reattach).
func (s *session) mayBlock() {
	ls := s.loop
	if ls == nil || ls.detached.Load() {
		return
	}
	ls.detached.Store(true)
	l := ls.loop
	for _, fd := range []int{ls.cfd, ls.bfd} {
		unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, fd, nil)
	}
	ls.cev, ls.bev = unregistered, unregistered
	loopHandovers.Add(1)
	go l.run()
}

// abandon hands every session of a loop that stops to its goroutines.
func (l *eventLoop) abandon() {
	l.mu.Lock()
	l.broken = true
	back := l.returning
	l.returning = nil
	var all []*loopSession
	for _, ls := range l.byFD {
		if !ls.detached.Load() {
			all = append(all, ls) // twice each (both sockets): leave once
		}
	}
	l.mu.Unlock()
	for _, r := range back {
		r.ls.detached.Store(false)
		l.leave(r.ls, r.err)
	}
	for _, ls := range all {
		if !ls.out {
			l.leave(ls, nil)
		}
	}
}

// reattach ends a detached session's wait: the goroutine that carried it,
// which served the loop before, gives it back to the loop's goroutine —
// which registers it again or lets it leave (returned) — and ends.
func (l *eventLoop) reattach(ls *loopSession, leave bool, err error) {
	l.mu.Lock()
	if l.broken {
		l.mu.Unlock()
		ls.detached.Store(false)
		l.leave(ls, err)
		return
	}
	l.returning = append(l.returning, returning{ls, leave, err})
	l.mu.Unlock()
	l.wake()
}

// returned takes back the sessions whose wait ended (loop goroutine).
func (l *eventLoop) returned() {
	l.mu.Lock()
	back := l.returning
	l.returning = nil
	l.mu.Unlock()
	for _, r := range back {
		ls, leave, err := r.ls, r.leave, r.err
		ls.detached.Store(false)
		if !leave && !ls.s.life.steady() {
			leave = true // a transition while it waited: the goroutines take it
		}
		if !leave {
			leave, err = ls.rearm()
		}
		if leave {
			l.leave(ls, err)
		}
	}
}

// ready handles events on one of the session's sockets.
func (ls *loopSession) ready(fd int, events uint32) (leave bool, err error) {
	client := fd == ls.cfd
	conn, mask := ls.bcon, ls.bev
	if client {
		conn, mask = ls.ccon, ls.cev
	}
	if events&(unix.EPOLLHUP|unix.EPOLLERR) != 0 && mask&unix.EPOLLIN == 0 {
		// A socket the loop holds back is gone: the goroutines meet it.
		return true, nil
	}
	if events&unix.EPOLLOUT != 0 {
		done, err := conn.drain()
		if err != nil || !done {
			return err != nil, err
		}
		// Drained: what waited behind it in the other side's read
		// buffer goes on now (rearm registers the sockets again).
		if client {
			return ls.backendReady(), nil
		}
		return ls.clientReady()
	}
	if events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) == 0 {
		return false, nil
	}
	if client {
		ls.ccon.readDone.Store(false) // one read per readiness
		return ls.clientReady()
	}
	ls.bcon.readDone.Store(false)
	return ls.backendReady(), nil
}

// rearm registers each socket for what the loop waits for now: a socket
// with a spill for writability, the side whose output is held back for
// nothing, the rest for input.
func (ls *loopSession) rearm() (leave bool, err error) {
	cs, bs := ls.ccon.spilled(), ls.bcon.spilled()
	cev, bev := uint32(readable), uint32(readable)
	switch {
	case cs && bs:
		cev, bev = writable, writable
	case cs:
		cev, bev = readable|writable, 0
	case bs:
		cev, bev = 0, readable|writable
	}
	if !ls.register(ls.cfd, &ls.cev, cev) || !ls.register(ls.bfd, &ls.bev, bev) {
		return true, nil
	}
	return false, nil
}

// register sets the events fd is registered for to want; false: epoll
// refused (the goroutines take the session).
func (ls *loopSession) register(fd int, now *uint32, want uint32) bool {
	if *now == want {
		return true
	}
	op := unix.EPOLL_CTL_MOD
	if *now == unregistered {
		op = unix.EPOLL_CTL_ADD
	}
	if err := unix.EpollCtl(ls.loop.epfd, op, fd, &unix.EpollEvent{Events: want, Fd: int32(fd)}); err != nil {
		return false
	}
	*now = want
	return true
}

// leave takes the session off the loop and hands it to its goroutines.
func (l *eventLoop) leave(ls *loopSession, err error) {
	loopLeft.Add(1)
	ls.out = true
	ls.s.loop = nil
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
	if !ls.ccon.spilled() && !ls.bcon.spilled() {
		ls.left <- err
		return
	}
	// The spills go out before the goroutines write anything, and
	// without holding up the loop.
	go func() {
		if ferr := ls.bcon.flushSpill(); ferr != nil && err == nil {
			err = ferr
		}
		ls.ccon.flushSpill() // a client that is gone: its goroutine finds out
		ls.left <- err
	}()
}

// framed reports whether m holds a whole frame (next returns it); leave:
// the loop cannot take it (an error or the end of the stream: the
// goroutines meet it again), wait: nothing more to read now. A frame
// larger than the read buffer (a wide row, a long statement) is
// assembled in the reader's own buffer a read at a time, as the socket
// delivers it, up to the reader's limit.
func framed(m *msgReader) (ok, wait, leave bool) {
	if m.have < 0 {
		hdr, err := m.r.Peek(5)
		if err == nil {
			n := int(binary.BigEndian.Uint32(hdr[1:])) - 4
			if n < 0 || n > m.max {
				return false, false, true
			}
			if 5+n <= m.r.Size() {
				if _, err = m.r.Peek(5 + n); err == nil {
					return true, false, false
				}
			} else {
				// Too large to peek: take the header, and the body
				// from here on into buf.
				m.r.Read(m.hdr[:]) // buffered: Peek returned it
				if cap(m.buf) < n {
					m.buf = make([]byte, n)
				}
				m.buf = m.buf[:n]
				m.have = 0
			}
		}
		if m.have < 0 {
			if err == errWouldBlock {
				return false, true, false
			}
			return false, false, true
		}
	}
	for m.have < len(m.buf) {
		k, err := m.r.Read(m.buf[m.have:])
		m.have += k
		switch {
		case err == errWouldBlock:
			return false, true, false
		case err != nil:
			return false, false, true // next meets the error again
		}
	}
	return true, false, false
}

// clientReady handles what the client sent: clientLoop's steady state.
// It stops, leaving the rest buffered, while the backend's socket does
// not take what it is sent.
func (ls *loopSession) clientReady() (leave bool, err error) {
	s := ls.s
	for {
		if ls.bcon.spilled() {
			return false, nil
		}
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

// backendReady relays what the backend sent: backendLoop's steady
// state. It stops, leaving the rest buffered, while the client's socket
// does not take what it is sent.
func (ls *loopSession) backendReady() (leave bool) {
	s := ls.s
	for {
		if ls.ccon.spilled() {
			return false
		}
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
