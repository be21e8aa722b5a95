package pgwire

import (
	"bufio"
	"strings"

	"github.com/pgranger/pgranger/sqlstate"
)

// backendLoop relays backend messages to the client, consulting the
// pending queue for what to swallow, replace or sanitize.
func (s *session) backendLoop() {
	defer s.life.backendEnded()
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
		if s.relayBackend(typ, body) {
			return
		}
	}
}

// relayBackend handles one backend message: it consults the pending
// queue for what to swallow, replace or sanitize, keeps the bookkeeping
// (views, search_path, portals, statement runs) and buffers what the
// client gets. It reads nothing and does not flush: backendLoop flushes
// when the backend has nothing more buffered. True: the backend's reset is answered (finish), the
// relay is over.
func (s *session) relayBackend(typ byte, body []byte) (over bool) {
	s.queue.recycle() // nothing popped before is in use any more
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
			s.readies.Add(1)
			s.bc.views.reset() // DISCARD ALL dropped them
			// Clean: finish returns the connection to the pool, once
			// it is done with the connection's writer itself.
			s.released = len(body) == 1 && body[0] == 'I' && !p.failed
			return true
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
			tag, _ := cstringBytes(body)
			s.bc.views.commandTag(tag)
			if string(tag) == "ROLLBACK" {
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
	case 'N':
		// LOG and DEBUG messages never reach a client (docs/security.md
		// "Session settings"): debug_print_plan, trace_sort and kin write
		// plans, rewritten statements with policy text and sort sizes at
		// those levels, and a server or role may run with
		// client_min_messages = log whatever pgranger allows a session.
		relay = (head == nil || !head.swallow) && !serverLogMessage(body)
	case 'A':
		relay = head == nil || !head.swallow
	}
	if relay {
		s.cwMu.Lock()
		writeFrame(s.cw, typ, body)
		s.cwMu.Unlock()
	}
	if typ == 'Z' {
		s.readies.Add(1) // after the write: see session.answered
	}
	if ready != 0 {
		// After the relay: a session that a shutdown ends here gets
		// its ReadyForQuery first, then the FATAL error. The client
		// cannot have answered yet; the flush comes later.
		s.settle(ready, false)
	}
	return false
}

// backendLost ends the session whose backend connection failed. After a
// FATAL error from the backend (relayed already) the client connection is
// just closed, as PostgreSQL closes it. A connection that vanished without
// a word gets pgranger's FATAL error, 08006 connection_failure — what
// JDBC reports for a lost connection and what pools treat as "discard and
// reconnect" (docs/decisions.md) — and a statement that may still run on
// the backend (the network failed, not PostgreSQL) is cancelled.
func (s *session) backendLost(err error) {
	if s.life.current() == phaseDropping {
		return // finish closed it
	}
	if !s.backendFatal {
		s.writeClient(func(w *bufio.Writer) {
			writeError(w, "FATAL", fatalf(sqlstate.ConnectionFailure, "%s", msgBackendLost))
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
	sev := severity(body)
	return sev == "FATAL" || sev == "PANIC"
}

// serverLogMessage reports whether a NoticeResponse body has severity LOG
// or DEBUG1–DEBUG5: a message meant for the server log.
func serverLogMessage(body []byte) bool {
	sev := severity(body)
	return sev == "LOG" || strings.HasPrefix(sev, "DEBUG")
}

// severity is the severity of an ErrorResponse or NoticeResponse body:
// its non-localized 'V' field (PostgreSQL 9.6 and later), else 'S'.
func severity(body []byte) string {
	sev := ""
	for len(body) > 0 && body[0] != 0 {
		field := body[0]
		v, rest, ok := cstring(body[1:])
		if !ok {
			return sev
		}
		switch field {
		case 'V':
			return v
		case 'S':
			sev = v
		}
		body = rest
	}
	return sev
}

func (s *session) writeClient(f func(w *bufio.Writer)) {
	s.cwMu.Lock()
	defer s.cwMu.Unlock()
	f(s.cw)
	s.cw.Flush()
}
