package pgwire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/sqlrewrite"
	"github.com/pgranger/pgranger/sqlstate"
)

// denySQL replaces a denied statement on the backend. It fails during
// parse analysis whatever objects exist (no FROM item has that column and
// no relation is named), so the backend raises an error exactly where the
// denied statement would have run: the transaction is aborted, the rest of
// an extended-protocol pipeline is skipped to Sync, as PostgreSQL's own
// error would do. The backend loop replaces its error with the denial.
const denySQL = "SELECT pgranger_denied FROM (SELECT) AS pgranger"

// prepared is a statement the client prepared (Parse), remembered so it
// can be prepared again when the policy or catalog under it changes.
type prepared struct {
	sql       string
	paramOIDs []uint32
	result    *sqlrewrite.Result
	stamp     sqlrewrite.Stamp // what result was decided under: while it is current, a Bind looks nothing up
	// authoring: an authoring statement, answered by pgranger and never
	// prepared on the backend (authoring.go); ran: its portal was run.
	authoring, ran bool
}

var (
	errTerminate = errors.New("client terminated")
	errEnded     = errors.New("the session was ended by pgranger")
	errRevoked   = errors.New("the session's user changed in the configuration")
)

// clientLoop reads client messages until Terminate or an error.
func (s *session) clientLoop() error {
	bw := s.bc.w
	// working: life.begin ran for the batch of messages being handled
	// (those the client sent at once). The lifecycle's lock is taken once
	// per batch, at its start and (settle) its end; between, each message
	// checks the phase lock-free, and takes the lock only when it changed.
	working := false
	for {
		if !s.cr.buffered() {
			if working {
				working = false
				s.settle(0, true)
			}
			if s.life.current() == phaseEnding {
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
				return fatalf(sqlstate.ProtocolViolation, "message too large (listen.max-message-bytes)")
			}
			return err
		}
		v := handle
		if !working || !s.life.steady() {
			v = s.life.begin()
			switch v {
			case refuseEnded:
				return errEnded
			case refuseGone:
				return net.ErrClosed
			}
			working = true
		}
		if s.pastDeadline() {
			s.expire()
			return errExpired
		}
		if v == refuseRevoked {
			// Not forwarded: it would run with the identity the
			// configuration took back. What is in flight finishes
			// first: settle ends the session now if nothing is, else
			// at the ReadyForQuery that completes it (or revokeGrace).
			s.settle(0, true)
			select {
			case <-s.life.ended:
			case <-s.life.backendDone:
			}
			return errRevoked
		}
		if err := s.forwardClient(typ, body); err != nil {
			var fe *fatalError
			if errors.As(err, &fe) || err == errTerminate {
				return err // Terminate, or the client's message was malformed
			}
			return s.backendWriteFailed(err) // every other failure is a write to the backend
		}
	}
}

// forwardClient handles one client message the session may run: checked,
// rewritten or refused, noted in the pending queue, and buffered for the
// backend. It reads nothing and does not flush: clientLoop decides when a
// batch is over (BenchmarkRelayStatementBookkeeping drives it without
// sockets). errTerminate: the client said goodbye; a *fatalError: its
// message was malformed; any other error is a failed write to the backend.
func (s *session) forwardClient(typ byte, body []byte) (err error) {
	bw := s.bc.w
	switch typ {
	case 'Q':
		err = s.query(body)
	case 'P':
		err = s.parse(body)
	case 'B':
		err = s.bind(body)
	case 'D':
		if st := s.describedAuthoring(body); st != nil {
			return s.authorDescribe(body[0] == 'S', st)
		}
		if len(body) > 0 && body[0] == 'S' {
			name, _, _ := cstring(body[1:])
			if err = s.ensureCurrent(name); err != nil {
				break
			}
		}
		s.queue.push(pending{kind: 'D'})
		err = writeFrame(bw, typ, body)
	case 'E':
		portal, _, _ := cstring(body)
		if st := s.portals[portal]; st != nil && st.authoring {
			return s.authorExecute(st)
		}
		p := pending{kind: 'E', run: s.takeRun(portal), portal: portal}
		if st := s.portals[portal]; st != nil {
			p.governed = st.result.Governed()
			s.noteEffects(&p, st.result)
		}
		s.queue.push(p)
		err = writeFrame(bw, typ, body)
	case 'C':
		p := pending{kind: 'C'}
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
		if s.localSync() {
			return nil
		}
		s.queue.push(pending{kind: 'S'})
		err = writeFrame(bw, typ, body)
	case 'F':
		err = s.functionCall()
	case 'H', 'd', 'c', 'f':
		err = writeFrame(bw, typ, body)
	case 'X':
		return errTerminate
	default:
		return fatalf(sqlstate.ProtocolViolation, "invalid frontend message type %q", typ)
	}
	return err
}

// describedAuthoring is the authoring statement or portal a Describe
// names (nil when it names none).
func (s *session) describedAuthoring(body []byte) *prepared {
	if len(body) < 1 {
		return nil
	}
	name, _, _ := cstring(body[1:])
	st := s.portals[name]
	if body[0] == 'S' {
		st = s.stmts[name]
	}
	if st != nil && st.authoring {
		return st
	}
	return nil
}

// backendWriteFailed: a write to the backend connection failed, so the
// connection is gone. Whichever loop notices first, the client must get
// the same FATAL 08006: the backend loop reports it (backendLost) once its
// read fails too, which it does at once after a reset; a connection that
// only refuses writes is closed to make it fail.
func (s *session) backendWriteFailed(err error) error {
	select {
	case <-s.life.backendDone:
	case <-time.After(time.Second):
		s.bc.conn.Close()
		<-s.life.backendDone
	}
	s.srv.log.Debug("writing to the backend failed", identityAttrs(s.id, "err", err)...)
	return net.ErrClosed // reported; finish discards the connection
}

// functionCall refuses a fast-path FunctionCall (libpq's PQfn and its
// large-object API, JDBC's LargeObjectManager): it calls a function by OID
// with no statement the rewriter could check, so it never reaches the
// backend. It is answered in place as PostgreSQL answers a call it refuses
// — ErrorResponse, ReadyForQuery, an open transaction block aborted — by
// sending the denial statement as a Query, and the session goes on.
func (s *session) functionCall() error {
	res := sqlrewrite.Refusal(s.rewriteEnv(), s.rsess, sqlrewrite.KindFunctionCall, &sqlrewrite.Error{
		Code:    sqlstate.InsufficientPrivilege,
		Message: fmt.Sprintf("pgranger: fast-path function calls (FunctionCall messages, e.g. the large-object API) are not allowed through pgranger (user %q)", s.id.User),
		Hint:    "Call the function in a SQL statement.",
	})
	s.audit(res)
	s.queue.push(pending{kind: 'Q', deny: res.Err})
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
	s.env.Policy = s.srv.opts.Policies.Snapshot()
	s.env.Catalog = s.cat.Current()
	s.env.Now = time.Now()
	s.env.ParamTypes = nil
	return &s.env
}

// refreshCatalog is the rewrite's forced reload when a statement names a
// relation the snapshot does not hold. It waits on the database (and up
// to a second on the previous reload): only this session's client loop
// waits, its backend loop and every other session go on.
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
		return fatalf(sqlstate.ProtocolViolation, "malformed Query message")
	}
	res := s.rewrite(sql)
	if res.Authoring != "" && s.srv.opts.Author != nil {
		return s.authorQuery(sql, res)
	}
	s.audit(res)
	if res.Err != nil {
		s.queue.push(pending{kind: 'Q', deny: res.Err})
		return writeMsg(s.bc.w, &pgproto3.Query{String: denySQL})
	}
	if err := s.createViews(res.Views, true); err != nil {
		return err
	}
	if res.DropsTemp() {
		s.bc.views.reset()
	}
	p := pending{kind: 'Q', governed: res.Governed(), run: s.track(res)}
	s.noteEffects(&p, res)
	s.queue.push(p)
	if !res.Changed {
		return writeFrame(s.bc.w, 'Q', body)
	}
	return writeQuery(s.bc.w, res.SQL)
}

func (s *session) parse(body []byte) error {
	var msg pgproto3.Parse
	if err := msg.Decode(body); err != nil {
		return fatalf(sqlstate.ProtocolViolation, "malformed Parse message")
	}
	env := s.rewriteEnv()
	env.ParamTypes = msg.ParameterOIDs // they decide how the backend resolves operators on $n
	res := s.rewriteIn(env, msg.Query)
	if res.Authoring != "" && s.srv.opts.Author != nil {
		return s.authorParse(&msg, res)
	}
	if res.Err != nil {
		s.audit(res)
		delete(s.stmts, msg.Name)
		s.queue.push(pending{kind: 'P', deny: res.Err})
		return writeMsg(s.bc.w, &pgproto3.Parse{Name: msg.Name, Query: denySQL})
	}
	if err := s.createViews(res.Views, false); err != nil {
		return err
	}
	s.stmts[msg.Name] = &prepared{sql: msg.Query, paramOIDs: append([]uint32(nil), msg.ParameterOIDs...), result: res,
		stamp: sqlrewrite.StampOf(env, s.rsess, res)}
	s.queue.push(pending{kind: 'P', governed: res.Governed()})
	if !res.Changed {
		return writeFrame(s.bc.w, 'P', body)
	}
	return writeMsg(s.bc.w, &pgproto3.Parse{Name: msg.Name, Query: res.SQL, ParameterOIDs: msg.ParameterOIDs})
}

func (s *session) bind(body []byte) error {
	portal, rest, ok := cstring(body)
	if !ok {
		return fatalf(sqlstate.ProtocolViolation, "malformed Bind message")
	}
	name, _, ok := cstring(rest)
	if !ok {
		return fatalf(sqlstate.ProtocolViolation, "malformed Bind message")
	}
	if st := s.stmts[name]; st != nil && st.authoring {
		return s.authorBind(portal, st)
	}
	if err := s.ensureCurrent(name); err != nil {
		return err
	}
	gov := false
	st := s.stmts[name]
	if st != nil {
		gov = st.result.Governed()
		s.bindRun(portal, st.result) // one record per execution, when it completes
	}
	s.portals[portal] = st
	s.queue.push(pending{kind: 'B', governed: gov, portal: portal})
	return writeFrame(s.bc.w, 'B', body)
}

// ensureCurrent prepares a remembered statement again when its rewrite
// for the current policy, catalog and search_path differs from the one the
// backend holds (docs/security.md, "Prepared statements": nothing keeps enforcing an old policy). The
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
	s.queue.push(pending{kind: 'C', swallow: true})
	if err := writeMsg(s.bc.w, &pgproto3.Close{ObjectType: 'S', Name: name}); err != nil {
		return err
	}
	if res.Err != nil {
		s.audit(res)
		s.queue.push(pending{kind: 'P', deny: res.Err})
		return writeMsg(s.bc.w, &pgproto3.Parse{Name: name, Query: denySQL})
	}
	s.queue.push(pending{kind: 'P', swallow: true})
	return writeMsg(s.bc.w, &pgproto3.Parse{Name: name, Query: res.SQL, ParameterOIDs: st.paramOIDs})
}

// noteEffects applies what the statement does to the session's
// search_path when it is sent, and remembers how to take it back.
func (s *session) noteEffects(p *pending, res *sqlrewrite.Result) {
	if res.OpensBlock() {
		s.paths.begin()
	}
	if res.SearchPath != nil {
		p.setsPath, p.pathBefore = true, s.paths.sent(res.SearchPath)
	}
}
