package sqlrewrite

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/policy"
)

func TestLiteralTemplate(t *testing.T) {
	cases := []struct {
		sql, tmpl string
		lits      []string
		ok        bool
	}{
		{"SELECT id FROM t WHERE id = 42", "SELECT id FROM t WHERE id = $1", []string{"42"}, true},
		{"SELECT 'a''b', 1.5e3, .5 FROM t", "SELECT $1, $2, $3 FROM t", []string{"'a''b'", "1.5e3", ".5"}, true},
		{"SELECT x1, t2.c3 FROM t4", "", nil, false},
		{"SELECT E'x', B'101', X'ff', U&'d\\0061' FROM t", "", nil, false},
		{"SELECT 1 -- 2\n/* 3 */", "SELECT $1 -- 2\n/* 3 */", []string{"1"}, true},
		{`SELECT "7" FROM t`, "", nil, false},
		{"SELECT $$ 5 $$", "", nil, false},
		{"SELECT $q$ 5 $q$, 6", "", nil, false},
		{"SELECT x.5, 1", "SELECT x.5, $1", []string{"1"}, true}, // x.5 kept as written (and no endless loop)
		{"SELECT 'a'\n'b', 1", "", nil, false},
		{"SELECT 'a' 'b'", "", nil, false},
		{"SELECT 'abc", "", nil, false},
		{`SELECT "abc, 1`, "", nil, false},
		{"SELECT 1 /* /* */", "", nil, false},
		{"SELECT 1.2.3", "", nil, false},
		{"SELECT 1_000", "", nil, false},
		{"SELECT 12abc", "", nil, false},
		{"SELECT 'a\\', 1", "", nil, false},
		{"SELECT -- x\r 1", "SELECT -- x\r $1", []string{"1"}, true},
		{"SELECT 'café', \"é1\", é2 FROM t", "SELECT $1, \"é1\", é2 FROM t", []string{"'café'"}, true},
		{"SELECT 'it''s' /* 1 /* 2 */ 3 */ , 4.", "SELECT $1 /* 1 /* 2 */ 3 */ , $2", []string{"'it''s'", "4."}, true},
		{"SELECT foo'x'", "", nil, false},
		{"SELECT id FROM t WHERE id = $1 AND x = 2", "", nil, false},
		{"SELECT 0x1F", "", nil, false},
		{"SELECT a FROM t ORDER BY 1 LIMIT 10", "SELECT a FROM t ORDER BY $1 LIMIT $2", []string{"1", "10"}, true},
	}
	for _, c := range cases {
		tmpl, lits, ok := literalTemplate(c.sql)
		if ok != c.ok || tmpl != c.tmpl || !reflect.DeepEqual(lits, c.lits) {
			t.Errorf("literalTemplate(%q) = %q %q %v, want %q %q %v", c.sql, tmpl, lits, ok, c.tmpl, c.lits, c.ok)
		}
	}
}

func TestTemplateInstantiate(t *testing.T) {
	res := &Result{SQL: "SELECT id FROM (SELECT id FROM s.t WHERE region = 'x$1') t WHERE id = $1 AND n = $2", Changed: true}
	tm := newTemplate(res, 2)
	if !tm.usable {
		t.Fatal("template not usable")
	}
	got := tm.instantiate("ignored", []string{"42", "'a'"}).SQL
	if want := "SELECT id FROM (SELECT id FROM s.t WHERE region = 'x$1') t WHERE id = 42 AND n = 'a'"; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if newTemplate(&Result{SQL: "SELECT $1, $1", Changed: true}, 1).usable {
		t.Error("a placeholder used twice must not be usable")
	}
	if newTemplate(&Result{SQL: "SELECT $1", Changed: true}, 2).usable {
		t.Error("a placeholder missing must not be usable")
	}
	if u := newTemplate(&Result{SQL: "x", Err: &Error{Code: "42501"}}, 1); u.usable {
		t.Error("a denied template must not be usable")
	}
	if r := newTemplate(&Result{SQL: "SELECT $1"}, 1).instantiate("SELECT 5", []string{"5"}); r.SQL != "SELECT 5" {
		t.Errorf("an unchanged template forwards the client's text, got %q", r.SQL)
	}
}

// templateAgrees checks the promise of template.go for one statement:
// when the template path answers, the exact path allows the statement too
// and means the same (the same statement once parsed and rendered, the
// same views, search_path and statement information).
func templateAgrees(rw *Rewriter, env *Env, sess *Session, sql string) error {
	ctx := context.Background()
	got, _, ok := rw.rewriteTemplated(ctx, env, sess, sql, newCacheKey(env, sess, sql))
	if !ok {
		return nil
	}
	exactSess := *sess
	exact, _ := rw.rewriteText(ctx, env, &exactSess, sql, false)
	if exact.Err != nil {
		return fmt.Errorf("the template allows what the statement does not (%s %s): %s", exact.Err.Code, exact.Err.Message, got.SQL)
	}
	if got.Changed != exact.Changed {
		return fmt.Errorf("changed %v by template, %v exactly", got.Changed, exact.Changed)
	}
	want := exact.SQL
	have := got.SQL
	if exact.Changed {
		tree, err := pg.Parse(got.SQL)
		if err != nil {
			return fmt.Errorf("the instantiated template does not parse: %v\n%s", err, got.SQL)
		}
		if have, err = pg.Deparse(tree); err != nil {
			return err
		}
	}
	if have != want {
		return fmt.Errorf("template and exact rewrites differ:\ntemplate: %s\nexact:    %s", have, want)
	}
	if !reflect.DeepEqual(got.Views, exact.Views) || !reflect.DeepEqual(got.SearchPath, exact.SearchPath) ||
		!reflect.DeepEqual(got.Statements, exact.Statements) || got.Fingerprint != exact.Fingerprint {
		return fmt.Errorf("template and exact results differ beyond the SQL:\n%+v\n%+v", got, exact)
	}
	return nil
}

// TestTemplateAgreesWithExactPath runs every golden case, and a variant
// of it with other constants, through both paths.
func TestTemplateAgreesWithExactPath(t *testing.T) {
	eng := testEngine(t)
	files, _ := filepath.Glob("testdata/rewrite/*.sql")
	answered := 0
	for _, file := range files {
		for _, c := range parseCases(t, file) {
			subj := testSubjects[c.user]
			rw := New(c.opts)
			for _, sql := range []string{c.sql, otherConstants(c.sql)} {
				sess := &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo",
					SearchPath: c.searchPath, DefaultSearchPath: []string{"$user", "public"}}
				env := &Env{Policy: policy.Snapshot{Engine: eng, Generation: 1}, Catalog: testCatalog(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
				if err := templateAgrees(rw, env, sess, sql); err != nil {
					t.Errorf("%s: %s: %v\nSQL: %s", filepath.Base(file), c.name, err, sql)
				}
				if _, _, ok := rw.rewriteTemplated(context.Background(), env, sess, sql, newCacheKey(env, sess, sql)); ok {
					answered++
				}
			}
		}
	}
	if answered < 150 {
		t.Errorf("only %d statements took the template path", answered)
	}
	t.Logf("%d statements answered from templates, each equal to its exact rewrite", answered)
}

// otherConstants replaces each literal literalTemplate finds with another
// of its kind.
func otherConstants(sql string) string {
	tmpl, lits, ok := literalTemplate(sql)
	if !ok {
		return sql
	}
	for i := len(lits); i >= 1; i-- {
		repl := "7"
		if strings.HasPrefix(lits[i-1], "'") {
			repl = "'zz'"
		} else if strings.ContainsAny(lits[i-1], ".eE") {
			repl = "2.5"
		}
		tmpl = strings.ReplaceAll(tmpl, "$"+strconv.Itoa(i), repl)
	}
	return tmpl
}

// A text served by a template goes into the exact cache the second time
// it is seen, so a text that comes back is one lookup, while one-off texts
// (new constants every time) are never stored.
func TestRepeatedTemplatedTextIsCachedByItsText(t *testing.T) {
	rw, env, sess := benchEnv(&testing.B{})
	const sql = "SELECT id, ssn, amount FROM sales.orders WHERE id = 42"
	r1 := rw.Rewrite(context.Background(), env, sess, sql)
	r2 := rw.Rewrite(context.Background(), env, sess, sql)
	r3 := rw.Rewrite(context.Background(), env, sess, sql)
	if r1.Err != nil || !r1.fromTemplate || !r2.fromTemplate {
		t.Fatalf("the first two must come from the template: %+v %+v", r1.Err, r2.Err)
	}
	if r1 == r2 {
		t.Error("the first sighting must not be stored by its text")
	}
	if r3 != r2 {
		t.Error("the third must be the exact cache's entry stored at the second")
	}
	if r3.SQL != r1.SQL {
		t.Errorf("cached %q, templated %q", r3.SQL, r1.SQL)
	}
	other := rw.Rewrite(context.Background(), env, sess, "SELECT id, ssn, amount FROM sales.orders WHERE id = 43")
	if _, ok := rw.cache.GetIfPresent(newCacheKey(env, sess, "SELECT id, ssn, amount FROM sales.orders WHERE id = 43")); ok || !other.fromTemplate {
		t.Error("a text seen once must not be in the exact cache")
	}
}

// A literal's type decides the barrier (an integer key against an integer
// literal is leakproof, against a numeric one it is not), so a template
// serves only statements whose literals have its literals' types.
func TestTemplateKeepsLiteralTypes(t *testing.T) {
	rw := New(Options{})
	subj := testSubjects["bob"]
	sess := &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo", SearchPath: []string{"$user", "public"}, DefaultSearchPath: []string{"$user", "public"}}
	env := &Env{Policy: policy.Snapshot{Engine: testEngine(t), Generation: 1}, Catalog: testCatalog(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	for _, c := range []struct {
		sql   string
		guard bool
	}{
		{"SELECT id FROM sales.orders WHERE id = 5", false},
		{"SELECT id FROM sales.orders WHERE id = 5.5", true},
		{"SELECT id FROM sales.orders WHERE id = 6", false},
		{"SELECT id FROM sales.orders WHERE id = 7.5", true},
		{"SELECT id FROM sales.orders WHERE id = 30000000000", false},
	} {
		for i := 0; i < 3; i++ { // the second and third time from the template or the cache
			res := rw.Rewrite(context.Background(), env, sess, c.sql)
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if got := strings.Contains(res.SQL, "CASE WHEN region = 'US' THEN id = "); got != c.guard {
				t.Errorf("%s (run %d): guarded %v, want %v:\n%s", c.sql, i, got, c.guard, res.SQL)
			}
		}
	}
}

// Declared parameter types (Parse's parameter OIDs) decide the barrier as
// a literal's type does, and are part of the cache key.
func TestParamTypesDecideTheBarrier(t *testing.T) {
	rw := New(Options{})
	subj := testSubjects["bob"]
	sess := &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo", SearchPath: []string{"$user", "public"}, DefaultSearchPath: []string{"$user", "public"}}
	for _, c := range []struct {
		types []uint32
		guard bool
	}{
		{nil, false},
		{[]uint32{catalog.OIDNumeric}, true},
		{[]uint32{catalog.OIDInt8}, false},
		{[]uint32{0}, false},
		{[]uint32{catalog.OIDNumeric}, true},
	} {
		env := &Env{Policy: policy.Snapshot{Engine: testEngine(t), Generation: 1}, Catalog: testCatalog(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), ParamTypes: c.types}
		res := rw.Rewrite(context.Background(), env, sess, "SELECT id FROM sales.orders WHERE id = $1")
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		if got := strings.Contains(res.SQL, "THEN id = $1"); got != c.guard {
			t.Errorf("parameter types %v: guarded %v, want %v:\n%s", c.types, got, c.guard, res.SQL)
		}
	}
}
