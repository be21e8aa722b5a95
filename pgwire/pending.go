package pgwire

import (
	"sync"
	"sync/atomic"

	"github.com/pgranger/pgranger/sqlrewrite"
)

// pending is what one forwarded message will be answered with.
type pending struct {
	kind     byte              // frontend message type: Q P B D E C S
	swallow  bool              // answer to pgranger's own message: not relayed
	deny     *sqlrewrite.Error // its ErrorResponse is replaced by this
	governed bool              // errors are sanitized (docs/security.md, "Errors")
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
// writes a message, the backend loop pops as answers arrive. Only one
// goroutine pushes at a time (the client loop; after it, finish) and only
// the backend loop pops, so the consumer works on a batch of its own (out)
// and takes the lock only to swap in what was pushed since (in): one lock
// per push and per refill, not per message relayed. n counts the entries
// not yet popped, for the other goroutines' questions (empty, settled).
type pendingQueue struct {
	mu sync.Mutex
	in []*pending // pushed, not yet taken by the consumer; guarded by mu

	out  []*pending // the consumer's batch: out[head:] are next
	head int

	n atomic.Int64
	// unsynced: the last message pushed is not a Sync or Query, so the
	// backend owes a ReadyForQuery only after more from the client (a
	// Parse/Bind/Execute before its Sync, with a Flush in between).
	unsynced atomic.Bool
}

func (q *pendingQueue) push(p *pending) {
	q.n.Add(1) // before the entry can be popped: n never reads 0 while it is queued
	q.mu.Lock()
	q.in = append(q.in, p)
	q.mu.Unlock()
	q.unsynced.Store(p.kind != 'S' && p.kind != 'Q')
}

// front is the next entry to be answered (backend loop only).
func (q *pendingQueue) front() *pending {
	if q.head == len(q.out) {
		if q.n.Load() == 0 {
			return nil
		}
		q.mu.Lock()
		q.in, q.out = q.out[:0], q.in
		q.mu.Unlock()
		q.head = 0
		if len(q.out) == 0 {
			return nil
		}
	}
	return q.out[q.head]
}

// pop takes the next entry (backend loop only).
func (q *pendingQueue) pop() *pending {
	p := q.front()
	if p == nil {
		return nil
	}
	q.out[q.head] = nil
	q.head++
	q.n.Add(-1)
	return p
}

// skipToSync drops what the backend will not answer after an error in the
// extended protocol: everything before the next Sync. It returns the
// dropped entries, whose effects (views, search_path) did not happen.
func (q *pendingQueue) skipToSync() (dropped []*pending) {
	for p := q.front(); p != nil && p.kind != 'S' && p.kind != 'Q'; p = q.front() {
		dropped = append(dropped, q.pop())
	}
	return dropped
}

// empty reports whether every entry pushed was popped (any goroutine).
func (q *pendingQueue) empty() bool { return q.n.Load() == 0 }

// settled reports whether everything sent has been answered, up to a
// ReadyForQuery: nothing in flight and no pipeline waiting for its Sync.
func (q *pendingQueue) settled() bool {
	return q.n.Load() == 0 && !q.unsynced.Load()
}
