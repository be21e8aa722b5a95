package pgwire

import (
	"bufio"
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgranger/pgranger/audit"
	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/sqlrewrite"
	"github.com/pgranger/pgranger/sqlstate"
)

// Authoring statements (docs/authoring.md) are answered by pgranger: the
// Author writes them to Ranger (or the policy file) and the client gets
// their command tag, with no message to the backend. Everything here
// keeps the protocol in order without the backend:
//
//   - a statement is answered locally only when every message forwarded
//     before it has been answered to the client (answered); otherwise it
//     is inside a pipeline and refused with 25001, as PostgreSQL refuses
//     CREATE DATABASE there;
//   - inside a transaction block it is refused with 25001 (in a failed
//     one, 25P02): a Ranger write cannot be rolled back;
//   - every refusal goes the way of every denial (a statement that fails
//     on the backend, its error replaced), so a transaction block is
//     aborted and an extended-protocol pipeline skipped to Sync exactly
//     as a PostgreSQL error would;
//   - in the extended protocol Parse, Bind, Describe and Execute of such a
//     statement are answered locally, and so is the Sync that follows
//     them when nothing forwarded is unanswered.

// Author runs authoring statements: cmd/proxy's adapter over package
// authoring. nil in Options: authoring is off, and the statements are
// refused with the rewriter's denial (42501, hint naming the key).
type Author interface {
	Author(ctx context.Context, req *AuthorRequest) *AuthorResult
}

// AuthorRequest is one authoring statement of a session.
type AuthorRequest struct {
	SQL     string
	Session *sqlrewrite.Session
	// Relation finds a table for the statement: schema "" resolves name
	// along the session's search_path; a name the catalog does not know
	// reloads it once.
	Relation func(schema, name string) (*catalog.Relation, bool)
}

// AuthorNotice is a NOTICE or WARNING for the client.
type AuthorNotice struct {
	Severity, Message string
}

// AuthorResult is the answer: the command tag, notices, or the refusal;
// and what the audit record says.
type AuthorResult struct {
	Tag                       string
	Notices                   []AuthorNotice
	Err                       *sqlrewrite.Error
	Resource, ResType, Access string
	Sent                      []string
}

// refusedName is the statement name of the placeholder Parse that carries
// a refusal at the place of a Bind, Describe or Execute: it fails during
// parse analysis, so nothing is stored under it.
const refusedName = "pgranger_refused"

// answered reports whether every message forwarded so far has been
// answered to the client: nothing pending, no pipeline waiting for its
// Sync, and every ReadyForQuery owed relayed (the backend loop counts
// them after writing them, so a local answer written now comes after).
func (s *session) answered() bool {
	return s.queue.settled() && s.readies.Load() == s.queue.syncs
}

// authorCheck is the refusal of an authoring statement the session cannot
// run now (nil when it can). run: the statement would run now (Execute,
// Query); Parse, Bind and Describe only need the protocol in order.
func (s *session) authorCheck(tag string, run bool) *sqlrewrite.Error {
	if !s.answered() {
		return &sqlrewrite.Error{Code: sqlstate.ActiveSQLTransaction, Message: fmt.Sprintf("pgranger: %s cannot be executed within a pipeline", tag),
			Detail: "pgranger answers it itself, and statements sent before it are not answered yet.",
			Hint:   "Send it after the answers to the statements before it."}
	}
	if !run {
		return nil
	}
	switch s.life.txStatus() {
	case 'T':
		return &sqlrewrite.Error{Code: sqlstate.ActiveSQLTransaction, Message: fmt.Sprintf("pgranger: %s cannot run inside a transaction block", tag),
			Detail: "pgranger writes it to Ranger at once, and a Ranger write cannot be rolled back."}
	case 'E':
		return &sqlrewrite.Error{Code: sqlstate.InFailedSQLTransaction, Message: "pgranger: current transaction is aborted, commands ignored until end of transaction block"}
	}
	return nil
}

// refuseAuthoring sends a refusal the way of every denial: a statement
// that fails on the backend, whose error is replaced.
func (s *session) refuseAuthoring(kind byte, parseName string, e *sqlrewrite.Error) error {
	if kind == 'Q' {
		s.queue.push(pending{kind: 'Q', deny: e})
		return writeMsg(s.bc.w, &pgproto3.Query{String: denySQL})
	}
	s.queue.push(pending{kind: 'P', deny: e})
	return writeMsg(s.bc.w, &pgproto3.Parse{Name: parseName, Query: denySQL})
}

// answerLocally writes messages to the client now. The caller checked
// answered: nothing the backend owes comes before them.
func (s *session) answerLocally(msgs ...pgproto3.BackendMessage) {
	s.localSinceSync = true
	var buf []byte
	for _, m := range msgs {
		buf, _ = m.Encode(buf)
	}
	s.writeClient(func(w *bufio.Writer) { w.Write(buf) })
}

// runAuthor runs the statement. It may wait on Ranger Admin; only this
// session's client goroutine waits, the other sessions go on.
func (s *session) runAuthor(sql string) *AuthorResult {
	env := s.rewriteEnv()
	req := &AuthorRequest{SQL: sql, Session: s.rsess, Relation: func(schema, name string) (*catalog.Relation, bool) {
		lookup := func(snap *catalog.Snapshot) (*catalog.Relation, bool) {
			if schema == "" {
				return snap.Resolve(name, s.rsess.SearchPath, s.rsess.Subject.User)
			}
			return snap.Lookup(schema, name)
		}
		if rel, ok := lookup(env.Catalog); ok {
			return rel, true
		}
		snap, err := s.refreshCatalog(context.Background())
		if err != nil {
			return nil, false
		}
		return lookup(snap)
	}}
	ans := s.srv.opts.Author.Author(context.Background(), req)
	if ans == nil {
		ans = &AuthorResult{Err: &sqlrewrite.Error{Code: sqlstate.InsufficientPrivilege, Message: "pgranger: the statement could not be run"}}
	}
	return ans
}

// authorDone answers a successful statement: its notices and its command
// tag.
func (s *session) authorDone(ans *AuthorResult, ready bool) {
	var msgs []pgproto3.BackendMessage
	for _, n := range ans.Notices {
		sev := n.Severity
		if sev == "" {
			sev = "NOTICE"
		}
		code := sqlstate.SuccessfulCompletion
		if sev == "WARNING" {
			code = sqlstate.Warning
		}
		msgs = append(msgs, &pgproto3.NoticeResponse{Severity: sev, SeverityUnlocalized: sev, Code: code, Message: n.Message})
	}
	msgs = append(msgs, &pgproto3.CommandComplete{CommandTag: []byte(ans.Tag)})
	if ready {
		msgs = append(msgs, &pgproto3.ReadyForQuery{TxStatus: s.life.txStatus()})
	}
	s.answerLocally(msgs...)
}

// authorQuery handles a simple Query that is one authoring statement.
func (s *session) authorQuery(sql string, res *sqlrewrite.Result) error {
	if e := s.authorCheck(res.Authoring, true); e != nil {
		s.auditAuthor(res, &AuthorResult{Tag: res.Authoring, Err: e})
		return s.refuseAuthoring('Q', "", e)
	}
	ans := s.runAuthor(sql)
	s.auditAuthor(res, ans)
	if ans.Err != nil {
		return s.refuseAuthoring('Q', "", ans.Err)
	}
	s.authorDone(ans, true)
	s.localSinceSync = false // the Query's own ReadyForQuery was written
	return nil
}

// authorParse handles a Parse of an authoring statement.
func (s *session) authorParse(msg *pgproto3.Parse, res *sqlrewrite.Result) error {
	e := s.authorCheck(res.Authoring, false)
	if e == nil && msg.Name != "" && s.stmts[msg.Name] != nil {
		e = &sqlrewrite.Error{Code: sqlstate.DuplicatePreparedStatement, Message: fmt.Sprintf("pgranger: prepared statement %q already exists", msg.Name)}
	}
	if e != nil {
		if msg.Name == "" {
			// PostgreSQL drops the unnamed statement when a Parse begins,
			// whether or not it succeeds; a named one that exists stays.
			delete(s.stmts, "")
		}
		s.auditAuthor(res, &AuthorResult{Tag: res.Authoring, Err: e})
		return s.refuseAuthoring('P', msg.Name, e)
	}
	s.stmts[msg.Name] = &prepared{sql: msg.Query, result: res, authoring: true}
	s.answerLocally(&pgproto3.ParseComplete{})
	return nil
}

// authorBind handles a Bind of an authoring statement: the portal is the
// session's own (one per Bind, so an Execute runs it once).
func (s *session) authorBind(portal string, st *prepared) error {
	if e := s.authorCheck(st.result.Authoring, false); e != nil {
		s.auditAuthor(st.result, &AuthorResult{Tag: st.result.Authoring, Err: e})
		return s.refuseAuthoring('P', refusedName, e)
	}
	s.portals[portal] = &prepared{sql: st.sql, result: st.result, authoring: true}
	s.answerLocally(&pgproto3.BindComplete{})
	return nil
}

// authorDescribe handles a Describe of an authoring statement or portal:
// no parameters, no rows.
func (s *session) authorDescribe(statement bool, st *prepared) error {
	if e := s.authorCheck(st.result.Authoring, false); e != nil {
		return s.refuseAuthoring('P', refusedName, e)
	}
	if statement {
		s.answerLocally(&pgproto3.ParameterDescription{}, &pgproto3.NoData{})
	} else {
		s.answerLocally(&pgproto3.NoData{})
	}
	return nil
}

// authorExecute runs an authoring portal.
func (s *session) authorExecute(st *prepared) error {
	res := st.result
	if st.ran {
		// PostgreSQL runs a utility statement's portal once; a second
		// Execute only completes it again.
		s.answerLocally(&pgproto3.CommandComplete{CommandTag: []byte(res.Authoring)})
		return nil
	}
	if e := s.authorCheck(res.Authoring, true); e != nil {
		s.auditAuthor(res, &AuthorResult{Tag: res.Authoring, Err: e})
		return s.refuseAuthoring('P', refusedName, e)
	}
	st.ran = true
	ans := s.runAuthor(st.sql)
	s.auditAuthor(res, ans)
	if ans.Err != nil {
		return s.refuseAuthoring('P', refusedName, ans.Err)
	}
	s.authorDone(ans, false)
	return nil
}

// localSync answers a Sync that follows only locally answered messages.
func (s *session) localSync() bool {
	local := s.localSinceSync && s.answered()
	if local {
		s.answerLocally(&pgproto3.ReadyForQuery{TxStatus: s.life.txStatus()})
	}
	s.localSinceSync = false
	return local
}

// auditAuthor writes the statement's audit record, allowed or refused,
// with what it sent, and counts it.
func (s *session) auditAuthor(res *sqlrewrite.Result, ans *AuthorResult) {
	kind := ans.Tag
	if kind == "" {
		kind = res.Authoring
	}
	result := ResultOK
	if ans.Err != nil {
		result = ResultDenied
	}
	s.srv.obs.statement(sqlrewrite.StatementKind(kind), result)
	log := s.srv.opts.Audit
	if log == nil {
		return
	}
	a := &audit.Authored{Action: kind, Resource: ans.Resource, ResType: ans.ResType, Access: ans.Access, Sent: ans.Sent}
	if v, ok := s.srv.opts.Policies.Snapshot().Version(); ok {
		a.PolicyVersion = &v // the policies in force once it completed
	}
	if ans.Err != nil {
		a.Refused, a.Reason = true, ans.Err.Message
	}
	log.Author(s.auditWho, res.Fingerprint, a, time.Now())
}
