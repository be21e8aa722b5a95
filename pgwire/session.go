package pgwire

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/identity"
	"github.com/pgranger/pgranger/sqlrewrite"
)

// denySQL replaces a denied statement on the backend. It fails during
// parse analysis whatever objects exist (no FROM item has that column and
// no relation is named), so the backend raises an error exactly where the
// denied statement would have run: the transaction is aborted, the rest of
// an extended-protocol pipeline is skipped to Sync, as PostgreSQL's own
// error would do. The backend loop replaces its error with the denial.
const denySQL = "SELECT pgranger_denied FROM (SELECT) AS pgranger"

// pending is what one forwarded message will be answered with.
type pending struct {
	kind     byte              // frontend message type: Q P B D E C S
	swallow  bool              // answer to pgranger's own message: not relayed
	deny     *sqlrewrite.Error // its ErrorResponse is replaced by this
	governed bool              // errors are sanitized (DESIGN §6 "Errors")
	release  bool              // the reset query: on its ReadyForQuery the backend is released
	failed   bool              // an ErrorResponse arrived for it
	// view names the security-barrier view pgranger's own message creates;
	// createsView marks the Execute whose CommandComplete confirms it.
	// viewBeforeQuery marks those sent ahead of a simple Query: their error
	// is held back and shown in place of the Query's own.
	view            string
	createsView     bool
	viewBeforeQuery bool
	// locates marks the Execute of viewOIDQuery: its DataRow is the
	// view's OID, and these the origins of its columns.
	locates *viewOrigin
	// setsPath: the message changes search_path; pathBefore is the path
	// to return to if it fails.
	setsPath   bool
	pathBefore []string
	run        *stmtRun // audit and statement counters, until it completes (metrics.go)
	// portal names the portal of a Bind, an Execute or a Close of a
	// portal (closesPortal); resumed marks an Execute whose run was
	// looked up among the suspended portals (metrics.go).
	portal       string
	closesPortal bool
	resumed      bool
}

// pendingQueue is shared by the two loops: the client loop pushes before it
// writes a message, the backend loop pops as answers arrive.
type pendingQueue struct {
	mu    sync.Mutex
	items []*pending
	// unsynced: the last message pushed is not a Sync or Query, so the
	// backend owes a ReadyForQuery only after more from the client (a
	// Parse/Bind/Execute before its Sync, with a Flush in between).
	unsynced bool
}

func (q *pendingQueue) push(p *pending) {
	q.mu.Lock()
	q.items = append(q.items, p)
	q.unsynced = p.kind != 'S' && p.kind != 'Q'
	q.mu.Unlock()
}

func (q *pendingQueue) front() *pending {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		return nil
	}
	return q.items[0]
}

func (q *pendingQueue) pop() *pending {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		return nil
	}
	p := q.items[0]
	q.items[0] = nil
	q.items = q.items[1:]
	return p
}

// skipToSync drops what the backend will not answer after an error in the
// extended protocol: everything before the next Sync. It returns the
// dropped entries, whose effects (views, search_path) did not happen.
func (q *pendingQueue) skipToSync() (dropped []*pending) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) > 0 && q.items[0].kind != 'S' && q.items[0].kind != 'Q' {
		dropped = append(dropped, q.items[0])
		q.items[0] = nil
		q.items = q.items[1:]
	}
	return dropped
}

func (q *pendingQueue) empty() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) == 0
}

// settled reports whether everything sent has been answered, up to a
// ReadyForQuery: nothing in flight and no pipeline waiting for its Sync.
func (q *pendingQueue) settled() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) == 0 && !q.unsynced
}

// prepared is a statement the client prepared (Parse), remembered so it
// can be prepared again when the policy or catalog under it changes.
type prepared struct {
	sql       string
	paramOIDs []uint32
	result    *sqlrewrite.Result
	stamp     sqlrewrite.Stamp // what result was decided under: while it is current, a Bind looks nothing up
}

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
	cat   *catalog.Catalog
	rsess *sqlrewrite.Session // client loop; SearchPath refreshed from paths before each rewrite
	env   sqlrewrite.Env      // client loop; rewriteEnv refills it for each rewrite
	paths searchPathState

	stmts   map[string]*prepared // client loop
	portals map[string]*prepared // portal → its statement; client loop

	obs sessionObs // metrics.go
	// suspended holds the runs of portals a row-limited Execute left
	// suspended, until they complete or end (metrics.go); backend loop.
	suspended map[string]*stmtRun

	queue       pendingQueue
	backendDone chan struct{} // closed when the backend loop ends
	viewError   []byte        // backend loop: a held-back view creation error
	released    bool          // backend loop: the reset succeeded, finish may pool bc
	// backendFatal: the backend sent a FATAL error (pg_terminate_backend,
	// a shutdown of PostgreSQL); it was relayed and the connection closes
	// after it, which is then no news to the client. Backend loop only.
	backendFatal bool
	// dropping: finish closes the backend connection itself, so the backend
	// loop's read error is expected.
	dropping atomic.Bool

	expired atomic.Bool   // pgranger ended the session with a FATAL error of its own
	ended   chan struct{} // closed when it did
	// revoked is set when a reload took away the user's standing
	// (Server.EndStaleSessions): the session forwards nothing more and
	// ends at its next statement boundary. live is set when the session
	// starts relaying; EndStaleSessions leaves the others (still in
	// startup, whose writer is not shared yet) to check themselves.
	revoked atomic.Pointer[revocation]
	live    atomic.Bool

	act activity // is the session idle? (idle timeouts, graceful shutdown)
}

// activity knows whether a session is idle: every message the client sent
// has been answered up to a ReadyForQuery, and the client loop waits for
// the next one. pgranger ends a session of its own accord only then — at
// an idle timeout (listen.idle-timeout-secs,
// listen.idle-in-transaction-timeout-secs) and during a graceful shutdown
// — so a running statement is never cut short. Becoming idle, the checks
// of a timer or of the shutdown, and the client loop taking a new message
// happen under one lock: a message that arrives at that moment is either
// handled or refused after the FATAL error, never half of each.
type activity struct {
	mu      sync.Mutex
	working bool   // the client loop is handling a message
	status  byte   // the last ReadyForQuery's transaction status
	idle    bool   // settled: see session.settle
	gen     uint64 // a timer from an earlier idle period does nothing
	t       *time.Timer
	ended   bool // no further message is handled
}

// begin is called by the client loop for each message it reads; false
// means the session has been ended and the message must not run.
func (a *activity) begin() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ended {
		return false
	}
	a.working, a.idle = true, false
	a.stopTimer()
	return true
}

// end marks the session ended; true for the one caller that ended it.
func (a *activity) end() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ended {
		return false
	}
	a.ended = true
	a.stopTimer()
	return true
}

// endIfIdle ends the session when it is idle outside a transaction
// block (a graceful shutdown's test).
func (a *activity) endIfIdle() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ended || !a.idle || a.status != 'I' {
		return false
	}
	a.ended = true
	a.stopTimer()
	return true
}

func (a *activity) stopTimer() {
	a.gen++
	if a.t != nil {
		a.t.Stop()
		a.t = nil
	}
}

func newSession(s *Server, c net.Conn, cr *bufio.Reader, cw *bufio.Writer, bc *backendConn, id *identity.Identity, database string, cat *catalog.Catalog) *session {
	rsess := sqlrewrite.NewSession(id.User, id.Groups, id.Roles, id.Attributes, database)
	if a := c.RemoteAddr(); a != nil {
		rsess.ClientAddr = hostOf(a) // policy conditions' clientIPAddress
	}
	return &session{
		srv:         s,
		client:      c,
		cr:          newMsgReader(cr, s.cfg.Listen.MaxMessageBytes),
		cw:          cw,
		bc:          bc,
		br:          newMsgReader(bc.r, 1<<30),
		id:          id,
		cat:         cat,
		rsess:       rsess,
		stmts:       map[string]*prepared{},
		portals:     map[string]*prepared{},
		backendDone: make(chan struct{}),
		ended:       make(chan struct{}),
	}
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
				res := s.rewrite("SET search_path = " + kv[1])
				if res.Err != nil {
					return fatalf(res.Err.Code, "%s", res.Err.Message)
				}
				s.paths.sent(res.SearchPath)
			}
		}
		sql := "SELECT pg_catalog.set_config(" + sqlrewrite.QuoteLiteral(kv[0]) + ", " + sqlrewrite.QuoteLiteral(kv[1]) + ", false)"
		if _, err := s.bc.simpleValue(sql); err != nil {
			return fatalf(codeInvalidParameter, "%v", err)
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
	go s.backendLoop()
	s.live.Store(true)
	if fe, logMsg := s.srv.staleIdentity(s.id); fe != nil {
		// A reload changed the user while this login was under way and
		// EndStaleSessions passed the session over.
		s.revoke(fe, logMsg)
	}
	stopTimer := s.watchDeadline()
	s.settle('I', false) // startup's ReadyForQuery went out before the loops began
	err := s.clientLoop()
	stopTimer()
	s.act.end()
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, errTerminate) && !errors.Is(err, net.ErrClosed) && !s.expired.Load() {
		var fe *fatalError
		if errors.As(err, &fe) {
			s.writeClient(func(w *bufio.Writer) { writeError(w, "FATAL", fe) })
		}
		s.srv.log.Info("session ended", identityAttrs(s.id, "err", err)...)
	}
	s.finish()
}

// codeTokenExpired is the SQLSTATE of the FATAL error that ends a session
// whose token expired: 28000 (invalid authorization specification), the
// class of every token failure at login.
const codeTokenExpired = codeInvalidAuth

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
	if s.act.end() {
		s.terminate(fe, logMsg)
	}
}

// terminate writes fe and closes the client connection; the client loop
// then fails its read and the session goes through finish. The caller has
// ended s.act.
func (s *session) terminate(fe *fatalError, logMsg string) {
	s.expired.Store(true)
	// A client that does not read must not hold the session open: the
	// write gets a few seconds, then the connection is closed.
	s.client.SetWriteDeadline(time.Now().Add(5 * time.Second))
	s.writeClient(func(w *bufio.Writer) { writeError(w, "FATAL", fe) })
	s.client.Close()
	s.srv.log.Info(logMsg, identityAttrs(s.id)...)
	close(s.ended)
}

// codeAdminShutdown is PostgreSQL's SQLSTATE for a session ended by an
// administrator (pg_terminate_backend, a shutdown): what pgranger's
// graceful shutdown ends sessions with, in PostgreSQL's words.
const codeAdminShutdown = "57P01"

func shutdownFatal() *fatalError {
	return fatalf(codeAdminShutdown, "terminating connection due to administrator command")
}

// drain ends the session now if it is idle outside a transaction block;
// otherwise settle ends it when it gets there (Server.Shutdown).
func (s *session) drain() {
	if s.act.endIfIdle() {
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
	r := &revocation{fe: fe, logMsg: logMsg}
	if !s.revoked.CompareAndSwap(nil, r) {
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

var (
	errTerminate = errors.New("client terminated")
	errEnded     = errors.New("the session was ended by pgranger")
	errRevoked   = errors.New("the session's user changed in the configuration")
)

// clientLoop reads client messages until Terminate or an error.
func (s *session) clientLoop() error {
	bw := s.bc.w
	for {
		if !s.cr.buffered() {
			if s.expired.Load() {
				// The client was told the session is over: what it sent
				// since must not run.
				return errEnded
			}
			if err := bw.Flush(); err != nil {
				return s.backendWriteFailed(err)
			}
		}
		typ, body, err := s.cr.next()
		if err != nil {
			if errors.Is(err, errMessageTooLarge) {
				return fatalf(codeProtocolViolation, "message too large (listen.max-message-bytes)")
			}
			return err
		}
		if !s.act.begin() {
			return errEnded
		}
		select {
		case <-s.backendDone:
			return net.ErrClosed
		default:
		}
		if s.pastDeadline() {
			s.expire()
			return errExpired
		}
		if s.revoked.Load() != nil {
			// Not forwarded: it would run with the identity the
			// configuration took back. What is in flight finishes
			// first: settle ends the session now if nothing is, else
			// at the ReadyForQuery that completes it (or revokeGrace).
			s.settle(0, true)
			select {
			case <-s.ended:
			case <-s.backendDone:
			}
			return errRevoked
		}
		switch typ {
		case 'Q':
			err = s.query(body)
		case 'P':
			err = s.parse(body)
		case 'B':
			err = s.bind(body)
		case 'D':
			if len(body) > 0 && body[0] == 'S' {
				name, _, _ := cstring(body[1:])
				if err = s.ensureCurrent(name); err != nil {
					break
				}
			}
			s.queue.push(&pending{kind: 'D'})
			err = writeFrame(bw, typ, body)
		case 'E':
			portal, _, _ := cstring(body)
			p := &pending{kind: 'E', run: s.takeRun(portal), portal: portal}
			if st := s.portals[portal]; st != nil {
				p.governed = governed(st.result)
				s.noteEffects(p, st.result)
			}
			s.queue.push(p)
			err = writeFrame(bw, typ, body)
		case 'C':
			p := &pending{kind: 'C'}
			if len(body) > 1 {
				name, _, _ := cstring(body[1:])
				if body[0] == 'S' {
					delete(s.stmts, name)
				} else {
					delete(s.portals, name)
					p.portal, p.closesPortal = name, true
				}
			}
			s.queue.push(p)
			err = writeFrame(bw, typ, body)
		case 'S':
			s.queue.push(&pending{kind: 'S'})
			err = writeFrame(bw, typ, body)
		case 'F':
			err = s.functionCall()
		case 'H', 'd', 'c', 'f':
			err = writeFrame(bw, typ, body)
		case 'X':
			return errTerminate
		default:
			return fatalf(codeProtocolViolation, "invalid frontend message type %q", typ)
		}
		if err != nil {
			var fe *fatalError
			if errors.As(err, &fe) {
				return err // the client's message was malformed
			}
			return s.backendWriteFailed(err) // every other failure is a write to the backend
		}
		s.settle(0, true)
	}
}

// backendWriteFailed: a write to the backend connection failed, so the
// connection is gone. Whichever loop notices first, the client must get
// the same FATAL 08006: the backend loop reports it (backendLost) once its
// read fails too, which it does at once after a reset; a connection that
// only refuses writes is closed to make it fail.
func (s *session) backendWriteFailed(err error) error {
	select {
	case <-s.backendDone:
	case <-time.After(time.Second):
		s.bc.conn.Close()
		<-s.backendDone
	}
	s.srv.log.Debug("writing to the backend failed", identityAttrs(s.id, "err", err)...)
	return net.ErrClosed // reported; finish discards the connection
}

// settle is called when the session may have become idle: the backend
// loop relayed a ReadyForQuery with status, or the client loop finished
// handling a message (fromClient; its answer may have come already). Idle,
// the session starts its idle timer — inside a transaction block
// listen.idle-in-transaction-timeout-secs, outside one
// listen.idle-timeout-secs (0: off), ending it with PostgreSQL's SQLSTATEs
// for those timeouts — and during a graceful shutdown, outside a
// transaction block, it ends at once with 57P01.
func (s *session) settle(status byte, fromClient bool) {
	a := &s.act
	a.mu.Lock()
	if status != 0 {
		a.status = status
	}
	if fromClient {
		a.working = false
	}
	if a.ended || a.working || a.idle || a.status == 0 || !s.queue.settled() {
		a.mu.Unlock()
		return
	}
	a.idle = true
	a.stopTimer()
	if r := s.revoked.Load(); r != nil {
		// A statement boundary: the client has its whole result, then
		// the revocation's FATAL error.
		a.ended = true
		a.mu.Unlock()
		s.terminate(r.fe, r.logMsg)
		return
	}
	if s.srv.draining.Load() && a.status == 'I' {
		a.ended = true
		a.mu.Unlock()
		s.terminate(shutdownFatal(), "session ended: pgranger is shutting down")
		return
	}
	l := &s.srv.cfg.Listen
	inTxn := a.status == 'T' || a.status == 'E'
	secs := l.IdleTimeoutSecs
	if inTxn {
		secs = l.IdleInTxnTimeoutSecs
	}
	if secs > 0 { // off by default: then nothing is built on every ReadyForQuery
		gen := a.gen
		a.t = time.AfterFunc(time.Duration(secs)*time.Second, func() {
			a.mu.Lock()
			fire := a.gen == gen && a.idle && !a.ended
			if fire {
				a.ended = true
			}
			a.mu.Unlock()
			if fire {
				fe := fatalf("57P05", "terminating connection due to idle-session timeout (listen.idle-timeout-secs)")
				if inTxn {
					fe = fatalf("25P03", "terminating connection due to idle-in-transaction timeout (listen.idle-in-transaction-timeout-secs)")
				}
				s.terminate(fe, "session ended: idle timeout")
			}
		})
	}
	a.mu.Unlock()
}

// functionCall refuses a fast-path FunctionCall (libpq's PQfn and its
// large-object API, JDBC's LargeObjectManager): it calls a function by OID
// with no statement the rewriter could check, so it never reaches the
// backend. It is answered in place as PostgreSQL answers a call it refuses
// — ErrorResponse, ReadyForQuery, an open transaction block aborted — by
// sending the denial statement as a Query, and the session goes on.
func (s *session) functionCall() error {
	res := &sqlrewrite.Result{Err: &sqlrewrite.Error{
		Code:    sqlrewrite.CodeInsufficientPrivilege,
		Message: fmt.Sprintf("pgranger: fast-path function calls (FunctionCall messages, e.g. the large-object API) are not allowed through pgranger (user %q)", s.id.User),
		Hint:    "Call the function in a SQL statement.",
	}, Statements: []sqlrewrite.StatementInfo{{Kind: "FUNCTION CALL"}}}
	s.audit(res)
	s.queue.push(&pending{kind: 'Q', deny: res.Err})
	return writeMsg(s.bc.w, &pgproto3.Query{String: denySQL})
}

func (s *session) rewrite(sql string) *sqlrewrite.Result {
	return s.rewriteIn(s.rewriteEnv(), sql)
}

// rewriteEnv takes the policies, catalog snapshot and search_path a
// rewrite reads, once per message. The Env is the session's own, filled
// again each time (a rewrite keeps nothing of it): no allocation per Bind.
func (s *session) rewriteEnv() *sqlrewrite.Env {
	s.rsess.SearchPath = s.paths.get()
	if s.env.Refresh == nil {
		s.env.Refresh = s.refreshCatalog
	}
	s.env.Policy = s.srv.opts.Policies.PolicyState()
	s.env.Catalog = s.cat.Current()
	s.env.Now = time.Now()
	s.env.ParamTypes = nil
	return &s.env
}

func (s *session) refreshCatalog(ctx context.Context) (*catalog.Snapshot, error) {
	return s.cat.Refresh(ctx, time.Second)
}

func (s *session) rewriteIn(env *sqlrewrite.Env, sql string) *sqlrewrite.Result {
	defer s.srv.obs.observeRewrite(time.Now())
	return s.srv.opts.Rewriter.Rewrite(context.Background(), env, s.rsess, sql)
}

func (s *session) query(body []byte) error {
	sql, _, ok := cstring(body)
	if !ok {
		return fatalf(codeProtocolViolation, "malformed Query message")
	}
	res := s.rewrite(sql)
	s.audit(res)
	if res.Err != nil {
		s.queue.push(&pending{kind: 'Q', deny: res.Err})
		return writeMsg(s.bc.w, &pgproto3.Query{String: denySQL})
	}
	if err := s.createViews(res.Views, true); err != nil {
		return err
	}
	if dropsTemp(res) {
		s.bc.views.reset()
	}
	p := &pending{kind: 'Q', governed: governed(res), run: s.track(res)}
	s.noteEffects(p, res)
	s.queue.push(p)
	if !res.Changed {
		return writeFrame(s.bc.w, 'Q', body)
	}
	return writeMsg(s.bc.w, &pgproto3.Query{String: res.SQL})
}

func (s *session) parse(body []byte) error {
	var msg pgproto3.Parse
	if err := msg.Decode(body); err != nil {
		return fatalf(codeProtocolViolation, "malformed Parse message")
	}
	env := s.rewriteEnv()
	env.ParamTypes = msg.ParameterOIDs // they decide how the backend resolves operators on $n
	res := s.rewriteIn(env, msg.Query)
	if res.Err != nil {
		s.audit(res)
		delete(s.stmts, msg.Name)
		s.queue.push(&pending{kind: 'P', deny: res.Err})
		return writeMsg(s.bc.w, &pgproto3.Parse{Name: msg.Name, Query: denySQL})
	}
	if err := s.createViews(res.Views, false); err != nil {
		return err
	}
	s.stmts[msg.Name] = &prepared{sql: msg.Query, paramOIDs: append([]uint32(nil), msg.ParameterOIDs...), result: res,
		stamp: sqlrewrite.StampOf(env, s.rsess, res)}
	s.queue.push(&pending{kind: 'P', governed: governed(res)})
	if !res.Changed {
		return writeFrame(s.bc.w, 'P', body)
	}
	return writeMsg(s.bc.w, &pgproto3.Parse{Name: msg.Name, Query: res.SQL, ParameterOIDs: msg.ParameterOIDs})
}

func (s *session) bind(body []byte) error {
	portal, rest, ok := cstring(body)
	if !ok {
		return fatalf(codeProtocolViolation, "malformed Bind message")
	}
	name, _, ok := cstring(rest)
	if !ok {
		return fatalf(codeProtocolViolation, "malformed Bind message")
	}
	if err := s.ensureCurrent(name); err != nil {
		return err
	}
	gov := false
	st := s.stmts[name]
	if st != nil {
		gov = governed(st.result)
		s.bindRun(portal, st.result) // one record per execution, when it completes
	}
	s.portals[portal] = st
	s.queue.push(&pending{kind: 'B', governed: gov, portal: portal})
	return writeFrame(s.bc.w, 'B', body)
}

// ensureCurrent prepares a remembered statement again when its rewrite
// for the current policy, catalog and search_path differs from the one the
// backend holds (DESIGN §6: nothing keeps enforcing an old policy). The
// Close and Parse are pgranger's own; their answers are swallowed, and a
// rewrite that is now denied makes the Parse fail in place.
func (s *session) ensureCurrent(name string) error {
	st := s.stmts[name]
	if st == nil {
		return nil
	}
	env := s.rewriteEnv()
	env.ParamTypes = st.paramOIDs
	res := st.result
	if !st.stamp.Current(env, s.rsess) {
		res = s.rewriteIn(env, st.sql)
		st.stamp = sqlrewrite.StampOf(env, s.rsess, res)
	}
	// A view the statement reads may have gone with a rolled-back
	// transaction; the backend re-resolves the name when it replans.
	if err := s.createViews(res.Views, false); err != nil {
		return err
	}
	if res == st.result || (res.Err == nil && st.result.Err == nil && res.SQL == st.result.SQL) {
		st.result = res
		return nil
	}
	st.result = res
	s.queue.push(&pending{kind: 'C', swallow: true})
	if err := writeMsg(s.bc.w, &pgproto3.Close{ObjectType: 'S', Name: name}); err != nil {
		return err
	}
	if res.Err != nil {
		s.audit(res)
		s.queue.push(&pending{kind: 'P', deny: res.Err})
		return writeMsg(s.bc.w, &pgproto3.Parse{Name: name, Query: denySQL})
	}
	s.queue.push(&pending{kind: 'P', swallow: true})
	return writeMsg(s.bc.w, &pgproto3.Parse{Name: name, Query: res.SQL, ParameterOIDs: st.paramOIDs})
}

// noteEffects applies what the statement does to the session's
// search_path when it is sent, and remembers how to take it back.
func (s *session) noteEffects(p *pending, res *sqlrewrite.Result) {
	for _, st := range res.Statements {
		if st.Kind == "BEGIN" || st.Kind == "START TRANSACTION" {
			s.paths.begin()
		}
	}
	if res.SearchPath != nil {
		p.setsPath, p.pathBefore = true, s.paths.sent(res.SearchPath)
	}
}

// dropsTemp reports whether res holds a DISCARD, which (ALL, TEMP) drops
// the session's temporary views.
func dropsTemp(res *sqlrewrite.Result) bool {
	for _, st := range res.Statements {
		if st.Kind == "DISCARD" {
			return true
		}
	}
	return false
}

func governed(res *sqlrewrite.Result) bool {
	for _, st := range res.Statements {
		if st.Governed {
			return true
		}
	}
	return false
}

// backendLoop relays backend messages to the client, consulting the
// pending queue for what to swallow, replace or sanitize.
func (s *session) backendLoop() {
	defer close(s.backendDone)
	// Portals left suspended when the backend goes away returned rows
	// all the same: their records are written with what was counted.
	defer s.endPortals()
	for {
		if !s.br.buffered() {
			s.cwMu.Lock()
			s.cw.Flush()
			s.cwMu.Unlock()
		}
		typ, body, err := s.br.next()
		if err != nil {
			s.backendLost(err)
			return
		}
		head := s.queue.front()
		if head != nil && head.kind == 'E' && head.run == nil && !head.resumed {
			// A later Execute of a suspended portal continues its run.
			head.run, head.resumed = s.resumePortal(head.portal), true
		}
		relay := head == nil || !head.swallow
		var ready byte // a ReadyForQuery's status, once it is relayed
		switch typ {
		case 'E':
			s.bc.views.errorSeen()
			if isFatal(body) {
				// The backend ends the session (pg_terminate_backend,
				// PostgreSQL shutting down): its own error goes to the
				// client as it is — never replaced by a denial — and the
				// connection closes after it.
				s.backendFatal = true
				if head != nil {
					s.runFailed(head)
					if head.governed {
						body = sanitizeError(body)
					}
				}
				relay = true
				break
			}
			if head != nil {
				s.runFailed(head)
				if head.kind == 'B' && head.portal == "" {
					// A Bind to the unnamed portal drops the previous
					// one before it can fail.
					s.endPortal("")
				}
				head.failed = true
				relay = true
				switch {
				case head.deny != nil:
					body = encodeError(denialResponse(head.deny))
				case head.view != "":
					s.bc.views.forget(head.view)
					body = viewErrorResponse(body)
					if head.viewBeforeQuery {
						s.viewError, relay = append([]byte(nil), body...), false
					}
				case head.kind == 'Q' && s.viewError != nil:
					body, s.viewError = s.viewError, nil
				case head.governed:
					body = sanitizeError(body)
				}
				if head.swallow && head.kind == 'Q' {
					relay = false
				}
				if head.setsPath {
					s.paths.failed(head.pathBefore)
				}
				if head.kind != 'Q' {
					s.queue.pop()
					dropped := s.queue.skipToSync()
					for i := len(dropped) - 1; i >= 0; i-- {
						if d := dropped[i]; d.createsView {
							s.bc.views.forget(d.view)
						} else if d.setsPath {
							s.paths.failed(d.pathBefore)
						}
					}
				}
			}
		case 'Z':
			if len(body) == 1 {
				s.bc.views.ready(body[0])
				s.paths.ready(body[0])
				if body[0] == 'I' {
					// The transaction is over, and with it every portal.
					s.endPortals()
				}
			}
			// Everything up to the Sync or Query this answers is done.
			var p *pending
			for p = s.queue.pop(); p != nil && p.kind != 'S' && p.kind != 'Q'; p = s.queue.pop() {
			}
			if len(body) == 1 {
				ready = body[0]
			}
			if p != nil && p.release {
				s.bc.views.reset() // DISCARD ALL dropped them
				// Clean: finish returns the connection to the pool, once
				// it is done with the connection's writer itself.
				s.released = len(body) == 1 && body[0] == 'I' && !p.failed
				return
			}
			relay = p == nil || !p.swallow
		case '1', '2', '3', 's', 'n':
			s.portalReply(typ, head)
			if head != nil && head.kind != 'Q' {
				s.queue.pop()
			}
		case 'C', 'I':
			s.runCompleted(head, typ, body)
			if typ == 'C' {
				tag, _, _ := cstring(body)
				s.bc.views.commandTag(tag)
				if tag == "ROLLBACK" {
					s.paths.rolledBack()
				}
			}
			if head != nil && head.kind == 'E' {
				if head.createsView {
					s.bc.views.created(head.view)
				}
				s.queue.pop()
			}
		case 'T':
			if head != nil && head.kind == 'D' {
				s.queue.pop()
			}
			if relay {
				s.bc.views.mapOrigins(body)
			}
		case 'D':
			if head != nil && head.locates != nil {
				s.bc.views.located(head.view, parseOIDRow(body), head.locates)
			}
			if head != nil && head.kind == 'E' && head.run != nil {
				head.run.rows++ // a portal read in several Executes is counted by its rows
			}
		case 'S':
			s.bc.noteParameter(body)
			if name, rest, ok := cstring(body); ok && name == "session_authorization" {
				value, _, _ := cstring(rest)
				body = encodeParameterStatus(name, s.clientParam(name, value))
			}
			relay = head == nil || !head.swallow
		case 'N', 'A':
			relay = head == nil || !head.swallow
		}
		if relay {
			s.cwMu.Lock()
			writeFrame(s.cw, typ, body)
			s.cwMu.Unlock()
		}
		if ready != 0 {
			// After the relay: a session that a shutdown ends here gets
			// its ReadyForQuery first, then the FATAL error. The client
			// cannot have answered yet; the flush comes later.
			s.settle(ready, false)
		}
	}
}

// backendLost ends the session whose backend connection failed. After a
// FATAL error from the backend (relayed already) the client connection is
// just closed, as PostgreSQL closes it. A connection that vanished without
// a word gets pgranger's FATAL error, 08006 connection_failure — what
// JDBC reports for a lost connection and what pools treat as "discard and
// reconnect" (docs/decisions.md) — and a statement that may still run on
// the backend (the network failed, not PostgreSQL) is cancelled.
func (s *session) backendLost(err error) {
	if s.dropping.Load() {
		return // finish closed it
	}
	if !s.backendFatal {
		s.writeClient(func(w *bufio.Writer) {
			writeError(w, "FATAL", fatalf(codeConnectionFailure, "%s", msgBackendLost))
		})
		if !s.queue.empty() {
			go s.bc.cancel()
		}
		s.srv.log.Warn("the backend connection was lost; the session ends", identityAttrs(s.id, "backend_pid", s.bc.pid, "err", err)...)
	} else {
		s.srv.log.Info("the backend ended the session", identityAttrs(s.id, "backend_pid", s.bc.pid)...)
	}
	s.client.Close()
}

// msgBackendLost is the message of the FATAL error a client gets when its
// backend connection vanishes; it reads like libpq's own report of a
// server that went away, so users recognise it.
const msgBackendLost = "pgranger: the backend server closed the connection unexpectedly; the session cannot continue"

// isFatal reports whether an ErrorResponse body has severity FATAL or
// PANIC: the backend ends the connection after it.
func isFatal(body []byte) bool {
	sev := ""
	for len(body) > 0 && body[0] != 0 {
		field := body[0]
		v, rest, ok := cstring(body[1:])
		if !ok {
			return false
		}
		switch field {
		case 'V': // non-localized severity (PostgreSQL 9.6 and later)
			return v == "FATAL" || v == "PANIC"
		case 'S':
			sev = v
		}
		body = rest
	}
	return sev == "FATAL" || sev == "PANIC"
}

func (s *session) writeClient(f func(w *bufio.Writer)) {
	s.cwMu.Lock()
	defer s.cwMu.Unlock()
	f(s.cw)
	s.cw.Flush()
}

// finish ends the session: the backend connection is rolled back, reset
// with DISCARD ALL and returned to the pool, or closed when that does not
// succeed in time. A connection is never reused dirty.
func (s *session) finish() {
	select {
	case <-s.backendDone:
		s.bc.pool.discard(s.bc)
		return
	default:
	}
	if !s.queue.empty() {
		// The client left with work in flight: stop it rather than wait.
		s.bc.cancel()
	}
	w := s.bc.w
	s.queue.push(&pending{kind: 'Q', swallow: true})
	writeMsg(w, &pgproto3.Query{String: "ROLLBACK"})
	s.queue.push(&pending{kind: 'Q', swallow: true, release: true})
	writeMsg(w, &pgproto3.Query{String: "DISCARD ALL"})
	ok := w.Flush() == nil
	if ok {
		select {
		case <-s.backendDone:
		case <-time.After(10 * time.Second):
			ok = false
		}
	}
	if ok && s.released {
		s.bc.pool.release(s.bc)
		return
	}
	s.dropping.Store(true)
	s.bc.conn.Close()
	<-s.backendDone
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
