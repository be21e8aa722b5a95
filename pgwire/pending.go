package pgwire

import (
	"sync"

	"github.com/pgranger/pgranger/sqlrewrite"
)

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
	run        *stmtRun // audit and statement counters, until it completes (stmtaudit.go)
	// portal names the portal of a Bind, an Execute or a Close of a
	// portal (closesPortal); resumed marks an Execute whose run was
	// looked up among the suspended portals (stmtaudit.go).
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
