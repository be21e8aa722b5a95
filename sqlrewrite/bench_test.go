package sqlrewrite

import (
	"context"
	"strconv"
	"testing"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/pgranger/pgranger/policy"
)

func benchEnv(b *testing.B) (*Rewriter, *Env, *Session) {
	eng := testEngine(&testing.T{})
	subj := testSubjects["bob"]
	sess := &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo",
		SearchPath: []string{"$user", "public"}, DefaultSearchPath: []string{"$user", "public"}}
	env := &Env{Policy: policy.Snapshot{Engine: eng, Generation: 1}, Catalog: testCatalog(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	return New(Options{CacheBytes: 1 << 30}), env, sess
}

// A statement already rewritten for this identity: one cache lookup.
func BenchmarkRewriteCached(b *testing.B) {
	rw, env, sess := benchEnv(b)
	const sql = "SELECT id, ssn, amount FROM sales.orders WHERE id = 42"
	rw.Rewrite(context.Background(), env, sess, sql)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := rw.Rewrite(context.Background(), env, sess, sql); r.Err != nil {
			b.Fatal(r.Err)
		}
	}
}

// The same shape with a new constant every time (simple-protocol
// clients): a scan, one template lookup and the join with the constants.
func BenchmarkRewriteTemplate(b *testing.B) {
	rw, env, sess := benchEnv(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		sql := "SELECT id, ssn, amount FROM sales.orders WHERE id = " + strconv.Itoa(i)
		if r := rw.Rewrite(context.Background(), env, sess, sql); r.Err != nil {
			b.Fatal(r.Err)
		}
	}
}

// Cold: parse, analyse, ask the policies, deparse (no cache).
func BenchmarkRewriteColdPointLookup(b *testing.B) {
	rw, env, sess := benchEnv(b)
	const sql = "SELECT id, ssn, amount FROM sales.orders WHERE id = 42"
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if r := rw.rewrite(context.Background(), env, sess, sql); r.Err != nil {
			b.Fatal(r.Err)
		}
	}
}

// join3 reads three governed tables: sales.orders (masks and a row
// filter for bob), hr.employees (masks) and sales.regions.
const join3 = `SELECT o.id, o.ssn, e.name, r.name FROM sales.orders o
	JOIN hr.employees e ON e.id = o.id JOIN sales.regions r ON r.region = o.region WHERE o.id > 10`

// The whole cold rewrite of join3; the three benchmarks after it split it
// into parse, deparse (with the re-parse check) and, by difference, the
// analysis.
func BenchmarkRewriteColdJoin3(b *testing.B) {
	rw, env, sess := benchEnv(b)
	if r := rw.rewrite(context.Background(), env, sess, join3); r.Err != nil || !r.Changed || len(r.Views) != 0 {
		b.Fatalf("join3 should be rewritten with its row filter in the statement: %+v", r)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		rw.rewrite(context.Background(), env, sess, join3)
	}
}

func BenchmarkRewriteColdJoin3Parse(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := parse(join3, 1<<20, 1000); err != nil {
			b.Fatal(err)
		}
	}
}

// Rendering the rewritten statement (its row filter inside, no view), and
// the check that the rendering parses back to itself.
func BenchmarkRewriteColdJoin3Deparse(b *testing.B) {
	rw, env, sess := benchEnv(b)
	r := rw.rewrite(context.Background(), env, sess, join3)
	stmt, err := pg.Parse(r.SQL)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, _ := deparse(stmt)
		again, _ := parse(out, noLimit, noLimit)
		deparse(again)
	}
}

// The cache-hit path as the proxy runs it, with the hit/miss counters
// behind pgranger_rewrite_cache_hits_total: it must stay one lookup with
// no more allocations than the key needs.
func BenchmarkCacheHit(b *testing.B) {
	_, env, sess := benchEnv(b)
	rw := New(Options{CacheBytes: 1 << 30, CacheStats: true})
	const sql = "SELECT id, ssn, amount FROM sales.orders WHERE id = 42"
	rw.Rewrite(context.Background(), env, sess, sql)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := rw.Rewrite(context.Background(), env, sess, sql); r.Err != nil {
			b.Fatal(r.Err)
		}
	}
}
