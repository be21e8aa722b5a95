package pgwire

// A session relays one client connection to one backend connection.
//
// The files of a session, by concern:
//
//	session.go      the session, its start (run) and its end (finish)
//	lifecycle.go    its one state (phase) and the transitions: revocation,
//	                expiry, idle timeouts, graceful shutdown
//	pending.go      the queue of answers the backend owes, shared by the loops
//	clientloop.go   the client side: client messages checked, rewritten,
//	                forwarded to the backend
//	backendloop.go  the backend side: backend messages relayed to the client,
//	                swallowed, replaced or sanitized
//	stmtaudit.go    statement counters and audit records, per completion
//	rawio.go        socket reads and writes by raw system calls
//
// Goroutines that touch a session:
//
//   - the connection goroutine (Server.handle → session.run): the client
//     loop, which reads the client and writes the backend (bc.w, stmts,
//     portals, rsess, env, obs are its alone), then finish;
//   - the backend loop (go backendLoop from run), which reads the backend
//     and writes the client (cw, under cwMu), and alone touches
//     suspended, viewError, released, backendFatal;
//   - timers: the token deadline (expire), the idle timer (settle), a
//     revocation's grace (end);
//   - Server.Shutdown (drain; end at its deadline), Server.EndStaleSessions
//     on a reload (revoke, and its go end for an idle session);
//   - another connection's goroutine forwarding a CancelRequest
//     (cancelBackend), and backendLost's go bc.cancel: these use only the
//     backend connection's cancel key.
//
// Locks: life.mu guards the lifecycle (settle reads the pending queue's
// atomics under it; the queue itself has no lock: pending.go); cwMu the
// client writer. No lock is held while another is taken; the pool's and
// views' locks are their own.

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgranger/pgranger/audit"
	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/identity"
	"github.com/pgranger/pgranger/sqlrewrite"
	"github.com/pgranger/pgranger/sqlstate"
)

type session struct {
	srv       *Server
	cancelKey uint64

	client net.Conn
	cr     *msgReader    // client loop
	cwMu   sync.Mutex    // guards cw: the backend loop writes, the client loop only for fatal errors
	cw     *bufio.Writer // to the client

	bc *backendConn
	br *msgReader // backend loop

	id    *identity.Identity
	cat   catalogSource
	rsess *sqlrewrite.Session // client loop; SearchPath refreshed from paths before each rewrite
	env   sqlrewrite.Env      // client loop; rewriteEnv refills it for each rewrite
	// auditWho is the session's part of its audit records, built with
	// the session and never changed: both loops read it.
	auditWho *audit.Session
	paths    searchPathState

	stmts   map[string]*prepared // client loop
	portals map[string]*prepared // portal → its statement; client loop

	obs sessionObs // stmtaudit.go
	// suspended holds the runs of portals a row-limited Execute left
	// suspended, until they complete or end (stmtaudit.go); backend loop.
	suspended map[string]*stmtRun

	queue pendingQueue
	// readies counts the ReadyForQuery messages the backend loop has
	// relayed (or swallowed), after writing them: with queue.syncs it
	// tells the client loop that nothing owed comes before a local answer
	// (authoring.go).
	readies atomic.Uint64
	// localSinceSync: an extended-protocol message was answered locally
	// since the last Sync (client loop).
	localSinceSync bool
	viewError      []byte // backend loop: a held-back view creation error
	released       bool   // backend loop: the reset succeeded, finish may pool bc
	// backendFatal: the backend sent a FATAL error (pg_terminate_backend,
	// a shutdown of PostgreSQL); it was relayed and the connection closes
	// after it, which is then no news to the client. Backend loop only.
	backendFatal bool

	life lifecycle // lifecycle.go
}

// catalogSource is what a session reads of its database's catalog: a
// *catalog.Catalog, or a fixed snapshot in the relay's unit tests.
type catalogSource interface {
	Current() *catalog.Snapshot
	Refresh(ctx context.Context, minInterval time.Duration) (*catalog.Snapshot, error)
}

func newSession(s *Server, c net.Conn, cr *bufio.Reader, cw *bufio.Writer, bc *backendConn, id *identity.Identity, database string, cat catalogSource) *session {
	rsess := sqlrewrite.NewSession(id.User, id.Groups, id.Roles, id.Attributes, database)
	if a := c.RemoteAddr(); a != nil {
		rsess.ClientAddr = hostOf(a) // policy conditions' clientIPAddress
	}
	sess := &session{
		srv:     s,
		client:  c,
		cr:      newMsgReader(cr, s.cfg.Listen.MaxMessageBytes),
		cw:      cw,
		bc:      bc,
		br:      newMsgReader(bc.r, 1<<30),
		id:      id,
		cat:     cat,
		rsess:   rsess,
		stmts:   map[string]*prepared{},
		portals: map[string]*prepared{},
	}
	sess.life.init()
	sess.auditWho = &audit.Session{
		User:       id.User,
		Repo:       s.cfg.Policy.ServiceName,
		ClientIP:   hostOf(c.RemoteAddr()),
		Database:   database,
		Roles:      id.Roles,
		AuthMethod: id.Method,
		TokenSub:   id.Subject,
		TokenID:    id.TokenID,
	}
	return sess
}

// applySettings sends the client's startup settings to the backend (before
// the session starts relaying) and records the ParameterStatus answers.
//
// A startup value is a setting's raw text, as in postgresql.conf, so it is
// applied with set_config: SET name = 'a,b' would make one quoted element
// of a list setting (search_path "a,b", where a direct connection has the
// two schemas a, b — JDBC's currentSchema=a,b, PGOPTIONS=-c search_path=a,b).
func (s *session) applySettings(settings [][2]string) error {
	for _, kv := range settings {
		if strings.EqualFold(kv[0], "search_path") {
			if strings.TrimSpace(kv[1]) == "" {
				s.paths.sent([]string{})
			} else {
				res := s.rewrite(sqlrewrite.SetSearchPathSQL(kv[1]))
				if res.Err != nil {
					return fatalf(res.Err.Code, "%s", res.Err.Message)
				}
				s.paths.sent(res.SearchPath)
			}
		}
		sql := sqlrewrite.SetConfigSQL(kv[0], kv[1])
		if _, err := s.bc.simpleValue(sql); err != nil {
			return fatalf(sqlstate.InvalidParameterValue, "%v", err)
		}
	}
	return nil
}

// clientParam is the ParameterStatus value the client sees: the session is
// the authenticated user's, not the service role's.
func (s *session) clientParam(name, value string) string {
	if name == "session_authorization" {
		return s.id.User
	}
	return value
}

func (s *session) run() {
	defer s.srv.sessions.Delete(s.cancelKey)
	s.life.start()
	if fe, logMsg := s.srv.staleIdentity(s.id); fe != nil {
		// A reload changed the user while this login was under way and
		// EndStaleSessions passed the session over.
		s.revoke(fe, logMsg)
	}
	stopTimer := s.watchDeadline()
	s.settle('I', false) // startup's ReadyForQuery went out before the loops began
	go s.backendLoop()
	err := s.clientLoop()
	stopTimer()
	ownEnd := s.life.clientGone() // false: pgranger ended it, its FATAL error said why
	if !ownEnd {
		// The FATAL error is written by whoever ended the session
		// (terminate); the connection must not close before it is. The
		// client loop can get here first: it stops as soon as it sees
		// the session ending.
		<-s.life.ended
	}
	if ownEnd && err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, errTerminate) && !errors.Is(err, net.ErrClosed) {
		var fe *fatalError
		if errors.As(err, &fe) {
			s.writeClient(func(w *bufio.Writer) { writeError(w, "FATAL", fe) })
		}
		s.srv.log.Info("session ended", identityAttrs(s.id, "err", err)...)
	}
	s.finish()
}

// finish ends the session: the backend connection is rolled back, reset
// with DISCARD ALL and returned to the pool, or closed when that does not
// succeed in time. A connection is never reused dirty.
func (s *session) finish() {
	select {
	case <-s.life.backendDone:
		s.bc.pool.discard(s.bc)
		return
	default:
	}
	if !s.queue.empty() {
		// The client left with work in flight: stop it rather than wait.
		s.bc.cancel()
	}
	w := s.bc.w
	s.queue.push(pending{kind: 'Q', swallow: true})
	writeMsg(w, &pgproto3.Query{String: "ROLLBACK"})
	s.queue.push(pending{kind: 'Q', swallow: true, release: true})
	writeMsg(w, &pgproto3.Query{String: "DISCARD ALL"})
	ok := w.Flush() == nil
	if ok {
		select {
		case <-s.life.backendDone:
		case <-time.After(10 * time.Second):
			ok = false
		}
	}
	if ok && s.released {
		s.bc.pool.release(s.bc)
		return
	}
	s.life.drop()
	s.bc.conn.Close()
	<-s.life.backendDone
	s.bc.pool.discard(s.bc)
}

// releaseBackend gives back a connection of a session that never ran.
func (s *session) releaseBackend() {
	s.bc.pool.discard(s.bc)
}

// cancelBackend forwards a client's CancelRequest.
func (s *session) cancelBackend() { s.bc.cancel() }

func hostOf(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	return a.String()
}

func sortedParamNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
