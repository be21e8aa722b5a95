package sqlrewrite

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/sqlstate"
)

// withLimits makes the limits those of a stack of the given size for one
// test (never more than this process's own, so nothing it lets through
// can crash the test).
func withLimits(t *testing.T, stack int) {
	if stack > limits.StackBytes {
		t.Skipf("this process has a %s C stack", stackSize(limits.StackBytes))
	}
	saved := limits
	limits = limitsFor(stack)
	t.Cleanup(func() { limits = saved })
}

func rewriteNested(t *testing.T, rw *Rewriter, subj *policy.Subject, sql string) *Result {
	t.Helper()
	sess := &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo",
		SearchPath: []string{"$user", "public"}, DefaultSearchPath: []string{"$user", "public"}}
	env := &Env{Policy: policy.Snapshot{Engine: testEngine(t), Generation: 1}, Catalog: testCatalog(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	return rw.Rewrite(context.Background(), env, sess, sql)
}

// The statements that crashed the proxy are refused with 54001 and a
// message naming what is too deep, here with the limits of a 2 MiB stack
// (glibc's default thread stack when RLIMIT_STACK is unlimited).
func TestReportedCrashersRefused(t *testing.T) {
	withLimits(t, 2<<20)
	rep := strings.Repeat
	tooDeep := func(what string) string {
		return "pgranger: statement is nested too deeply to analyse safely: " + what +
			"; at most 512 levels are allowed with this process's 2 MiB C stack (ulimit -s)"
	}
	nobody := &policy.Subject{User: "nobody"} // no access to anything
	cases := []struct {
		name string
		user *policy.Subject
		sql  string
		msg  string
	}{
		{"4,800 + terms", nobody, "SELECT abs(1)" + rep(" + 1", 4800),
			tooDeep("4,800 operators on one path could make its parse tree 9,634 levels deep")},
		{"4,800 + terms on a governed table", testSubjects["bob"], "SELECT id" + rep(" + 1", 4800) + " FROM sales.orders",
			tooDeep("4,800 operators on one path could make its parse tree 9,630 levels deep")},
		{"30,000 OPERATOR(+)", nobody, "SELECT 1" + rep(" OPERATOR(pg_catalog.+) 1", 30000),
			tooDeep("30,000 operators on one path could make its parse tree 60,030 levels deep")},
		{"30,000 CROSS JOINs", nobody, "SELECT 1 FROM sales.orders" + rep(" CROSS JOIN sales.orders", 30000),
			tooDeep("30,000 joins on one path could make its parse tree 60,030 levels deep")},
		{"50,000 UNION ALL", nobody, "SELECT 1" + rep(" UNION ALL SELECT 1", 50000),
			tooDeep("50,000 UNION, INTERSECT or EXCEPT branches on one path could make its parse tree 50,030 levels deep")},
		{"800 nested CASE", nobody, "SELECT " + rep("CASE WHEN true THEN ", 800) + "1" + rep(" END", 800),
			tooDeep("800 nested CASE expressions on one path could make its parse tree 3,230 levels deep")},
		{"1,001 nested CASE", nobody, "SELECT " + rep("CASE WHEN true THEN ", 1001) + "1" + rep(" END", 1001),
			"pgranger: statement nests parentheses, brackets or CASE expressions more than 1,000 deep (listen.max-nesting-depth)"},
		// Within the scan's estimate, over the tree's exact limit.
		{"300 + terms", nobody, "SELECT 1" + rep(" + 1", 300),
			tooDeep("its parse tree is 609 levels deep (300 operators on one path)")},
		// Within the limit as written; the row filter's wrapper and the
		// barrier's CASE put the predicate deeper.
		{"a predicate moved under the row filter", testSubjects["bob"], "SELECT id FROM sales.orders WHERE amount > 1" + rep(" + 1", 248),
			"pgranger: the rewritten statement is nested too deeply to render safely: its parse tree is 515 levels deep (250 operators on one path); " +
				"at most 512 levels are allowed with this process's 2 MiB C stack (ulimit -s)"},
	}
	rw := New(Options{})
	for _, c := range cases {
		res := rewriteNested(t, rw, c.user, c.sql)
		if res.Err == nil || res.Err.Code != sqlstate.StatementTooComplex || res.Err.Message != c.msg {
			t.Errorf("%s: got %+v\nwant 54001 %q", c.name, res.Err, c.msg)
		}
	}
}

// What clients and tools send stays well within the limits, even those
// of a 2 MiB stack: every golden case (pg_dump's queries among them),
// long lists and flat chains.
func TestNestingLimitsKeepNormalSQL(t *testing.T) {
	withLimits(t, 2<<20)
	rep := strings.Repeat
	sqls := []string{
		"SELECT 1 WHERE a IN (" + rep("1, ", 10000) + "1)",
		"SELECT " + rep("a + 1, ", 10000) + "1 FROM t",
		"SELECT 1 FROM t WHERE " + rep("a = 1 AND ", 200) + "true",
		"SELECT 1 FROM t WHERE " + rep("(a = 1 OR b = 2) AND ", 200) + "true",
		"SELECT CASE" + rep(" WHEN a = 1 THEN b + 1", 2000) + " END FROM t",
		"INSERT INTO t VALUES " + rep("(1, 'a', 2.5), ", 10000) + "(1, 'a', 2.5)",
		"SELECT 1" + rep(" UNION ALL SELECT 1", 400),
		"SELECT 1 FROM t" + rep(" LEFT JOIN u ON u.id = t.id", 100),
		"SELECT a || b" + rep(" || c", 100) + " FROM t",
	}
	files, _ := filepath.Glob("testdata/rewrite/*.sql")
	for _, file := range files {
		for _, c := range parseCases(t, file) {
			sqls = append(sqls, c.sql)
		}
	}
	for _, sql := range sqls {
		if _, err := parse(sql, 1<<20, 1000); err != nil && err.Code == sqlstate.StatementTooComplex &&
			!strings.Contains(err.Message, "listen.max-nesting-depth") {
			t.Errorf("%.200s: %s", sql, err.Message)
		}
	}
}

// View definitions and policy expressions pass the same checks: a view
// defined deeper than the limit is denied, not parsed.
func TestNestingLimitsOnCatalogAndPolicyText(t *testing.T) {
	withLimits(t, 2<<20)
	rep := strings.Repeat
	rels := testRelations()
	rels = append(rels, &catalog.Relation{OID: 3001, Schema: "sales", Name: "deep_view", Kind: 'v', Owner: "postgres",
		Columns: []catalog.Column{col("x", 23, "integer")},
		ViewDef: " SELECT " + rep("1 OPERATOR(pg_catalog.+) ", 30000) + "1 AS x\n   FROM sales.orders;"})
	snap := catalog.Static(1, rels, testCatalogFunctions)
	subj := testSubjects["bob"] // may read sales.*: the view is expanded for him
	sess := &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo",
		SearchPath: []string{"$user", "public"}, DefaultSearchPath: []string{"$user", "public"}}
	env := &Env{Policy: policy.Snapshot{Engine: testEngine(t), Generation: 1}, Catalog: snap, Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	res := New(Options{}).Rewrite(context.Background(), env, sess, "SELECT x FROM sales.deep_view")
	want := "pgranger: the definition of view sales.deep_view cannot be analysed (statement is nested too deeply to analyse safely: " +
		"30,000 operators on one path could make its parse tree 60,030 levels deep; at most 512 levels are allowed with this process's 2 MiB C stack (ulimit -s)): " +
		`access denied for user "bob"`
	if res.Err == nil || res.Err.Code != sqlstate.InsufficientPrivilege || res.Err.Message != want {
		t.Errorf("deep view: got %+v\nwant 42501 %q", res.Err, want)
	}

	// A row filter as deep: the statement is denied.
	data, err := os.ReadFile("../examples/policies/hive.json")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ranger.ParseServicePolicies(data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range sp.Policies {
		if sp.Policies[i].ID == 20 { // the row filter on sales.orders
			sp.Policies[i].RowFilterPolicyItems[0].RowFilterInfo.FilterExpr = "id > 0" + rep(" OPERATOR(pg_catalog.+) 1", 30000)
		}
	}
	eng, err := policy.NewEngine(&ranger.Bundle{Policies: sp}, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	env = &Env{Policy: policy.Snapshot{Engine: eng, Generation: 1}, Catalog: snap, Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	res = New(Options{}).Rewrite(context.Background(), env, sess, "SELECT id FROM sales.orders")
	want = "pgranger: the row filter on sales.orders cannot be applied (expression is nested too deeply to analyse safely: " +
		"30,001 operators on one path could make its parse tree 60,032 levels deep; at most 512 levels are allowed with this process's 2 MiB C stack (ulimit -s)): " +
		`access denied for user "bob"`
	if res.Err == nil || res.Err.Code != sqlstate.InsufficientPrivilege || res.Err.Message != want {
		t.Errorf("deep row filter: got %+v\nwant 42501 %q", res.Err, want)
	}
}

// No SQL text or tree reaches pg_query's C code but through parse.go's
// parse, deparse and fingerprint: every call that parses, deparses,
// normalises or fingerprints is made there (the scanner, which does not
// recurse, may be called anywhere).
func TestCParserOnlyBehindTheLimits(t *testing.T) {
	const (
		pgQuery = "github.com/pganalyze/pg_query_go/v6"
		cParser = pgQuery + "/parser"
	)
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || path == filepath.Join("..", "sqlrewrite", "parse.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		names := map[string]bool{}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			switch p {
			case cParser:
				t.Errorf("%s imports %s: only sqlrewrite/parse.go may call the C parser", path, cParser)
			case pgQuery:
				name := "pg_query"
				if imp.Name != nil {
					name = imp.Name.Name
				}
				names[name] = true
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && names[x.Name] && pgQueryFuncs[sel.Sel.Name] {
					t.Errorf("%s calls pg_query.%s: use parse, deparse or fingerprint (sqlrewrite/parse.go)", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// pgQueryFuncs are pg_query_go's functions that run its parser or deparser
// on SQL text or a tree (Scan and SplitWithScanner only lex).
var pgQueryFuncs = map[string]bool{
	"Parse": true, "ParseToJSON": true, "Deparse": true, "ParsePlPgSqlToJSON": true, "Normalize": true,
	"NormalizeUtility": true, "Fingerprint": true, "FingerprintToUInt64": true, "SplitWithParser": true,
	"IsUtilityStmt": true, "Summary": true,
}
