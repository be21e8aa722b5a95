package pgwire

import (
	"strconv"
	"sync"
	"testing"
)

// The queue hands entries over in the order pushed across chunk
// boundaries, counts them, and reuses a chunk the consumer moved past.
func TestPendingQueueOrderAcrossChunks(t *testing.T) {
	var q pendingQueue
	if q.front() != nil || !q.empty() {
		t.Fatal("a new queue is empty")
	}
	next := 0 // the next portal number to pop
	for round, n := range []int{1, 15, 16, 17, 40, 3} {
		for i := 0; i < n; i++ {
			q.push(pending{kind: 'E', portal: strconv.Itoa(next + i)})
		}
		if int(q.n.Load()) != n {
			t.Fatalf("round %d: %d queued, want %d", round, q.n.Load(), n)
		}
		for i := 0; i < n; i++ {
			q.recycle() // as relayBackend does before each message
			p := q.pop()
			if p == nil || p.portal != strconv.Itoa(next) {
				t.Fatalf("round %d: popped %+v, want portal %d", round, p, next)
			}
			next++
		}
		if q.pop() != nil || !q.empty() {
			t.Fatalf("round %d: entries left", round)
		}
	}
	q.recycle()
	if c := q.spare.Load(); c == nil || c.filled.Load() != 0 || c.next.Load() != nil || c.slots[0].portal != "" {
		t.Errorf("the chunk the consumer moved past is not handed back clean: %v", c)
	}
}

// One goroutine pushes, another pops, as the client and backend loops
// do (go test -race checks the hand-over).
func TestPendingQueueProducerConsumer(t *testing.T) {
	var q pendingQueue
	const total = 20000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < total; i++ {
			q.push(pending{kind: 'E', portal: strconv.Itoa(i)})
		}
	}()
	for i := 0; i < total; {
		q.recycle()
		p := q.pop()
		if p == nil {
			continue
		}
		if p.portal != strconv.Itoa(i) {
			t.Fatalf("popped portal %s, want %d", p.portal, i)
		}
		i++
	}
	wg.Wait()
	if !q.empty() {
		t.Error("entries left")
	}
}
