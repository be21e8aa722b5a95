package pgwire

import (
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
	// locates marks the Execute of sqlrewrite.View.LocateSQL: its DataRow is the
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
// goroutine pushes at a time (the client loop; after it, finish, on the
// same goroutine) and only one pops (the backend loop), so it is a
// single-producer, single-consumer queue without a lock: entries live by
// value in chunks of pendingChunkLen; the producer fills a slot and then
// publishes it by the chunk's count, the consumer reads up to that count.
// A chunk the consumer has moved past is kept (retired) until recycle,
// where the consumer holds no entry any more, and then handed back as
// the producer's next chunk: a session relaying statements allocates
// nothing per message and takes no lock (three entries per prepared
// statement). n counts the entries not yet popped, for the other
// goroutines' questions (empty, settled).
type pendingQueue struct {
	tail *pendingChunk // producer: the chunk being filled (nil before the first push)

	head    *pendingChunk // consumer: the chunk being read; next is head.slots[hi]
	hi      int
	retired *pendingChunk // consumer: the chunk it moved past, until recycle

	spare atomic.Pointer[pendingChunk] // a recycled chunk for the producer's next

	n atomic.Int64
	// unsynced: the last message pushed is not a Sync or Query, so the
	// backend owes a ReadyForQuery only after more from the client (a
	// Parse/Bind/Execute before its Sync, with a Flush in between).
	unsynced atomic.Bool
	// syncs counts the Syncs and Queries pushed: each is owed one
	// ReadyForQuery (producer only; session.readies counts those relayed).
	syncs uint64
}

// pendingChunkLen entries per chunk: a Bind/Execute/Sync pipeline of five
// statements fits one.
const pendingChunkLen = 16

type pendingChunk struct {
	slots [pendingChunkLen]pending
	// filled: slots[:filled] are published (written before the count).
	filled atomic.Int32
	// next is the chunk after this one, set before anything is
	// published in it.
	next atomic.Pointer[pendingChunk]
}

// push queues what the message being forwarded will be answered with.
func (q *pendingQueue) push(v pending) {
	t := q.tail
	if t == nil || t.filled.Load() == pendingChunkLen {
		c := q.spare.Swap(nil)
		if c == nil {
			c = new(pendingChunk)
		}
		if t == nil {
			q.head = c // the consumer reads head only once n counts an entry
		} else {
			t.next.Store(c)
		}
		q.tail, t = c, c
	}
	i := t.filled.Load()
	t.slots[i] = v
	q.n.Add(1) // before the entry can be popped: n never reads 0 while it is queued
	t.filled.Store(i + 1)
	q.unsynced.Store(v.kind != 'S' && v.kind != 'Q')
	if v.kind == 'S' || v.kind == 'Q' {
		q.syncs++
	}
}

// front is the next entry to be answered (consumer only). It stays valid
// until the consumer's next recycle.
func (q *pendingQueue) front() *pending {
	if q.n.Load() == 0 {
		return nil
	}
	h := q.head
	if q.hi == pendingChunkLen {
		next := h.next.Load()
		if next == nil {
			return nil
		}
		q.retired, q.head, q.hi, h = h, next, 0, next
	}
	if int32(q.hi) >= h.filled.Load() {
		return nil
	}
	return &h.slots[q.hi]
}

// pop takes the next entry (consumer only); like front's, it stays valid
// until the consumer's next recycle.
func (q *pendingQueue) pop() *pending {
	p := q.front()
	if p == nil {
		return nil
	}
	q.hi++
	q.n.Add(-1)
	return p
}

// recycle hands the chunk the consumer moved past back to the producer;
// the consumer calls it only where it holds no entry (the start of
// relayBackend).
func (q *pendingQueue) recycle() {
	c := q.retired
	if c == nil {
		return
	}
	q.retired = nil
	c.slots = [pendingChunkLen]pending{} // drop what the entries point to
	c.filled.Store(0)
	c.next.Store(nil)
	q.spare.Store(c)
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
