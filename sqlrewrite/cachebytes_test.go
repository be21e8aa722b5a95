package sqlrewrite

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/pgranger/pgranger/policy"
)

// The rewrite caches are bounded by bytes (policy.rewrite-cache-mb), not
// by entries: 3,200 distinct statements over a masked and filtered table
// (about 1.5 KB of rewritten text each, 5 MB in all) leave the caches at
// their budget of 512 KB and the heap grown by a small multiple of it.
func TestRewriteCacheBoundedByBytes(t *testing.T) {
	const budget = 512 << 10
	rw := New(Options{CacheBytes: budget})
	subj := testSubjects["bob"]
	sess := &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo", SearchPath: []string{"$user", "public"}, DefaultSearchPath: []string{"$user", "public"}}
	env := &Env{Policy: policy.Snapshot{Engine: testEngine(t), Generation: 1}, Catalog: testCatalog(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	// The engine, the catalog and the parser warm up on other texts
	// first: what grows after that is the caches.
	for i := 0; i < 200; i++ {
		rw.Rewrite(context.Background(), env, sess, fmt.Sprintf("SELECT w%d.id FROM sales.orders w%d", i, i))
	}
	before := heap()
	total := 0
	for i := 0; i < 3200; i++ {
		// A new alias each time: a new text and a new template.
		sql := fmt.Sprintf("SELECT o%d.id, o%d.ssn, o%d.email FROM sales.orders o%d WHERE o%d.id = 1", i, i, i, i, i)
		res := rw.Rewrite(context.Background(), env, sess, sql)
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		total += len(res.SQL)
		// Each text comes twice, as a client that prepares it would send it.
		rw.Rewrite(context.Background(), env, sess, sql)
	}
	rw.cache.CleanUp()
	rw.templates.CleanUp()
	held := rw.cache.WeightedSize() + rw.templates.WeightedSize()
	grown := int64(heap()) - int64(before)
	t.Logf("%d MB of rewritten text; caches hold %d entries weighing %.1f MB; heap grew %.1f MB", total>>20,
		rw.cache.EstimatedSize()+rw.templates.EstimatedSize(), float64(held)/(1<<20), float64(grown)/(1<<20))
	if total < 8*budget {
		t.Fatalf("the workload (%d bytes) does not exceed the budget enough to show anything", total)
	}
	if held > budget {
		t.Errorf("the caches weigh %d bytes, over the budget of %d", held, budget)
	}
	if grown > 3*budget {
		t.Errorf("the heap grew by %d bytes for a cache budget of %d", grown, budget)
	}
	rw.cache.InvalidateAll()
	rw.templates.InvalidateAll()
}
