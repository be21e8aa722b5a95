package sqlrewrite

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func benchEnv(b *testing.B) (*Rewriter, *Env, *Session) {
	eng := testEngine(&testing.T{})
	subj := testSubjects["bob"]
	sess := &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo",
		SearchPath: []string{"$user", "public"}, DefaultSearchPath: []string{"$user", "public"}}
	env := &Env{Policy: PolicyState{Engine: eng, Generation: 1}, Catalog: testCatalog(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	return New(Options{CacheSize: 1 << 20}), env, sess
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

// A new text every time: parse, analyse, ask the policies, deparse.
func BenchmarkRewriteColdPointLookup(b *testing.B) {
	rw, env, sess := benchEnv(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		sql := fmt.Sprintf("SELECT id, ssn, amount FROM sales.orders WHERE id = %d", i)
		if r := rw.Rewrite(context.Background(), env, sess, sql); r.Err != nil {
			b.Fatal(r.Err)
		}
	}
}

func BenchmarkRewriteColdJoin3(b *testing.B) {
	rw, env, sess := benchEnv(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		sql := fmt.Sprintf(`SELECT o.id, o.ssn, e.name, r.name FROM sales.orders o
			JOIN hr.employees e ON e.id = o.id JOIN sales.regions r ON r.region = o.region WHERE o.id > %d`, i)
		if r := rw.Rewrite(context.Background(), env, sess, sql); r.Err != nil && r.Err.Code != "42501" {
			b.Fatal(r.Err)
		}
	}
}
