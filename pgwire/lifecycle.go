package pgwire

import (
	"bufio"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pgranger/pgranger/sqlstate"
)

// phase is where a session is in its life. It moves only forward, along
// the transitions of lifecycle's methods:
//
//	startup ──start──▶ live ──revoke──▶ revoking
//	   │                 │                 │
//	   │                 ├──clientGone─────┤──▶ closed ──┐
//	   └──────claimEnd───┴─────────────────┴──▶ ending ──┴─drop─▶ dropping
//
// Whether the backend loop has ended is the one fact beside the phase
// (backendGone): the backend can go away in any phase.
type phase uint32

const (
	// phaseStartup: in the server's session table (a cancel or a
	// shutdown can reach it) but not relaying; the client writer is not
	// shared yet, so a reload leaves it to check its user itself.
	phaseStartup phase = iota
	// phaseLive: both loops relay.
	phaseLive
	// phaseRevoking: a reload took away the user's standing. The client
	// loop forwards nothing more; the session ends at its next statement
	// boundary (settle) or after revokeGrace.
	phaseRevoking
	// phaseEnding: pgranger ended the session (token expiry, idle
	// timeout, shutdown, revocation): the one caller that made this
	// transition writes its FATAL error (terminate); no further client
	// message is handled.
	phaseEnding
	// phaseClosed: the client loop ended on its own (Terminate, the
	// client left, a protocol error); pgranger wrote no FATAL error of
	// its own, so run reports why.
	phaseClosed
	// phaseDropping: finish closes the backend connection itself, so the
	// backend loop's read error is expected, not a lost backend.
	phaseDropping
)

// lifecycle is a session's state: its phase, whether the backend loop
// has ended, and whether it is idle. Everything here changes under mu;
// phase is mirrored in an atomic for the lock-free checks of the hot path.
//
// Idle means every message the client sent has been answered up to a
// ReadyForQuery and the client loop waits for the next one. pgranger ends
// a session of its own accord only then — at an idle timeout
// (listen.idle-timeout-secs, listen.idle-in-transaction-timeout-secs), a
// revocation and during a graceful shutdown — so a running statement is
// never cut short. Becoming idle, the checks of a timer or of the
// shutdown, and the client loop taking a new message happen under mu: a
// message that arrives at that moment is either handled or refused after
// the FATAL error, never half of each.
type lifecycle struct {
	mu          sync.Mutex
	phase       phase
	fast        atomic.Uint32 // phase and backendGone (fastBackendGone), for reads without mu
	rev         *revocation   // why, from phaseRevoking on
	backendGone bool          // the backend loop ended (backendDone is closed)

	working bool        // the client loop is handling a message
	status  byte        // the last ReadyForQuery's transaction status
	idle    bool        // settled: see session.settle
	gen     uint64      // a timer from an earlier idle period does nothing
	t       *time.Timer // the idle timer

	ended       chan struct{} // closed when pgranger's FATAL error was written (terminate)
	backendDone chan struct{} // closed when the backend loop ends
}

func (l *lifecycle) init() {
	l.ended = make(chan struct{})
	l.backendDone = make(chan struct{})
}

// fastBackendGone is backendGone's bit in fast, beside the phase.
const fastBackendGone = 1 << 8

func (l *lifecycle) set(p phase) {
	l.phase = p
	l.store()
}

func (l *lifecycle) store() {
	v := uint32(l.phase)
	if l.backendGone {
		v |= fastBackendGone
	}
	l.fast.Store(v)
}

// current is the phase without the lock: a hint that may be a moment old.
func (l *lifecycle) current() phase { return phase(l.fast.Load() &^ fastBackendGone) }

// steady reports, without the lock, that the session is live with its
// backend loop running: the client loop, inside a batch it began, may
// handle the next message without begin. Any transition makes it false.
func (l *lifecycle) steady() bool { return l.fast.Load() == uint32(phaseLive) }

// over reports whether no further client message is handled.
func (p phase) over() bool { return p >= phaseEnding }

// txStatus is the transaction status of the last ReadyForQuery ('I',
// 'T', 'E'; 'I' before the first).
func (l *lifecycle) txStatus() byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.status == 0 {
		return 'I'
	}
	return l.status
}

// start: startup → live, when the session begins relaying.
func (l *lifecycle) start() {
	l.mu.Lock()
	if l.phase == phaseStartup {
		l.set(phaseLive)
	}
	l.mu.Unlock()
}

// isLive reports whether the session relays (live or revoking).
func (l *lifecycle) isLive() bool {
	p := l.current()
	return p == phaseLive || p == phaseRevoking
}

// revoke: live → revoking. False when the session is not live or was
// revoked or ended already. empty is whether nothing is in flight.
func (l *lifecycle) revoke(r *revocation) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.phase != phaseLive {
		return false
	}
	l.rev = r
	l.set(phaseRevoking)
	return true
}

// claimEnd: startup, live or revoking → ending; true for the one caller
// that made the transition, which then writes its FATAL error.
func (l *lifecycle) claimEnd() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.claimEndLocked()
}

func (l *lifecycle) claimEndLocked() bool {
	if l.phase.over() {
		return false
	}
	l.set(phaseEnding)
	l.stopTimer()
	return true
}

// claimEndIfIdle is claimEnd for a session idle outside a transaction
// block (a graceful shutdown's test).
func (l *lifecycle) claimEndIfIdle() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.idle || l.status != 'I' {
		return false
	}
	return l.claimEndLocked()
}

// clientGone: live or revoking → closed, when the client loop returns.
// False when pgranger ended the session (its FATAL error said why).
func (l *lifecycle) clientGone() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopTimer()
	if l.phase.over() {
		return false
	}
	l.set(phaseClosed)
	return true
}

// drop: ending or closed → dropping, before finish closes the backend
// connection itself.
func (l *lifecycle) drop() {
	l.mu.Lock()
	l.set(phaseDropping)
	l.mu.Unlock()
}

// backendEnded records that the backend loop ended; once.
func (l *lifecycle) backendEnded() {
	l.mu.Lock()
	l.backendGone = true
	l.store()
	l.mu.Unlock()
	close(l.backendDone)
}

// verdict is what the client loop may do with the message it read.
type verdict uint8

const (
	handle        verdict = iota // forward it
	refuseEnded                  // the session was ended: it must not run
	refuseGone                   // the backend loop ended
	refuseRevoked                // revoked: nothing more is forwarded
)

// begin is called by the client loop for each message it reads.
func (l *lifecycle) begin() verdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.phase.over():
		return refuseEnded
	case l.backendGone:
		return refuseGone
	}
	l.working, l.idle = true, false
	l.stopTimer()
	if l.phase == phaseRevoking {
		return refuseRevoked
	}
	return handle
}

func (l *lifecycle) stopTimer() {
	l.gen++
	if l.t != nil {
		l.t.Stop()
		l.t = nil
	}
}

// codeTokenExpired is the SQLSTATE of the FATAL error that ends a session
// whose token expired: 28000 (invalid authorization specification), the
// class of every token failure at login.
const codeTokenExpired = sqlstate.InvalidAuthorization

var errExpired = errors.New("the session's token expired")

// watchDeadline ends the session when its token expires (Identity's
// SessionDeadline: exp + clock skew + identity.jwt.expiry-grace-secs), idle
// or in the middle of a statement. It returns the function that stops the
// timer. Sessions of static users have no deadline.
func (s *session) watchDeadline() (stop func()) {
	deadline := s.id.SessionDeadline
	if deadline.IsZero() {
		return func() {}
	}
	t := time.AfterFunc(time.Until(deadline), s.expire)
	return func() { t.Stop() }
}

// pastDeadline reports whether the session outlived its token; the client
// loop checks it before every message, in case the timer is late.
func (s *session) pastDeadline() bool {
	d := s.id.SessionDeadline
	return !d.IsZero() && !time.Now().Before(d)
}

// expire tells the client, with a FATAL error it can read, that the session
// is over, and closes the client connection. The client loop then fails its
// read and the session goes through finish like any other: a statement in
// flight is cancelled, the backend is rolled back, reset and pooled.
func (s *session) expire() {
	s.end(fatalf(codeTokenExpired, "pgranger: the session's token expired at %s; log in again with a new token",
		s.id.TokenExpiry.UTC().Format(time.RFC3339)), "session ended: token expired")
}

// end is how pgranger itself ends a session whatever it is doing (token
// expiry, the end of a graceful shutdown, a revocation's grace): once,
// with a FATAL error the client can read. A statement in flight is
// cancelled by finish.
func (s *session) end(fe *fatalError, logMsg string) {
	if s.life.claimEnd() {
		s.terminate(fe, logMsg)
	}
}

// terminate writes fe and closes the client connection; the client loop
// then fails its read and the session goes through finish. The caller
// made the transition to phaseEnding.
func (s *session) terminate(fe *fatalError, logMsg string) {
	// A client that does not read must not hold the session open: the
	// write gets a few seconds, then the connection is closed.
	s.client.SetWriteDeadline(time.Now().Add(5 * time.Second))
	s.writeClient(func(w *bufio.Writer) { writeError(w, "FATAL", fe) })
	s.client.Close()
	s.srv.log.Info(logMsg, identityAttrs(s.id)...)
	close(s.life.ended)
}

// shutdownFatal ends a session as PostgreSQL ends one an administrator
// ended (pg_terminate_backend, a shutdown): 57P01, in its words.
func shutdownFatal() *fatalError {
	return fatalf(sqlstate.AdminShutdown, "terminating connection due to administrator command")
}

// drain ends the session now if it is idle outside a transaction block;
// otherwise settle ends it when it gets there (Server.Shutdown).
func (s *session) drain() {
	if s.life.claimEndIfIdle() {
		s.terminate(shutdownFatal(), "session ended: pgranger is shutting down")
	}
}

// revocation is why a reload ends a session.
type revocation struct {
	fe     *fatalError
	logMsg string
}

// revokeGrace is how long a statement that is running when its session
// is revoked may go on before it is cancelled and the session ends.
const revokeGrace = 5 * time.Second

// revoke ends the session at its next statement boundary: at once when
// nothing is in flight; otherwise settle ends it after the ReadyForQuery
// that completes the work in flight, so a result being sent is not cut
// off — unless it takes longer than revokeGrace. From now on the client
// loop forwards no message.
func (s *session) revoke(fe *fatalError, logMsg string) {
	if !s.life.revoke(&revocation{fe: fe, logMsg: logMsg}) {
		return
	}
	if s.queue.empty() {
		// Not on the caller's goroutine: the reload must not wait for
		// a client that does not read.
		go s.end(fe, logMsg)
		return
	}
	time.AfterFunc(revokeGrace, func() { s.end(fe, logMsg) })
}

// settle is called when the session may have become idle: the backend
// loop relayed a ReadyForQuery with status, or the client loop finished
// handling a message (fromClient; its answer may have come already). Idle,
// the session starts its idle timer — inside a transaction block
// listen.idle-in-transaction-timeout-secs, outside one
// listen.idle-timeout-secs (0: off), ending it with PostgreSQL's SQLSTATEs
// for those timeouts — and during a graceful shutdown, outside a
// transaction block, it ends at once with 57P01. A revoked session ends
// here, at its statement boundary.
func (s *session) settle(status byte, fromClient bool) {
	l := &s.life
	l.mu.Lock()
	if status != 0 {
		l.status = status
	}
	if fromClient {
		l.working = false
	}
	if l.phase.over() || l.working || l.idle || l.status == 0 || !s.queue.settled() {
		l.mu.Unlock()
		return
	}
	l.idle = true
	l.stopTimer()
	if l.phase == phaseRevoking {
		// A statement boundary: the client has its whole result, then
		// the revocation's FATAL error.
		r := l.rev
		l.claimEndLocked()
		l.mu.Unlock()
		s.terminate(r.fe, r.logMsg)
		return
	}
	if s.srv.draining.Load() && l.status == 'I' {
		l.claimEndLocked()
		l.mu.Unlock()
		s.terminate(shutdownFatal(), "session ended: pgranger is shutting down")
		return
	}
	lc := &s.srv.cfg.Listen
	inTxn := l.status == 'T' || l.status == 'E'
	secs := lc.IdleTimeoutSecs
	if inTxn {
		secs = lc.IdleInTxnTimeoutSecs
	}
	if secs > 0 { // off by default: then nothing is built on every ReadyForQuery
		gen := l.gen
		l.t = time.AfterFunc(time.Duration(secs)*time.Second, func() {
			l.mu.Lock()
			fire := l.gen == gen && l.idle && l.claimEndLocked()
			l.mu.Unlock()
			if fire {
				fe := fatalf(sqlstate.IdleSessionTimeout, "terminating connection due to idle-session timeout (listen.idle-timeout-secs)")
				if inTxn {
					fe = fatalf(sqlstate.IdleInTransactionSessionTimeout, "terminating connection due to idle-in-transaction timeout (listen.idle-in-transaction-timeout-secs)")
				}
				s.terminate(fe, "session ended: idle timeout")
			}
		})
	}
	l.mu.Unlock()
}
