//go:build unix

package sqlrewrite

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pgparser "github.com/pganalyze/pg_query_go/v6/parser"
	"github.com/pgranger/pgranger/policy"
)

// A nestShape is one construct PostgreSQL's grammar nests, as the text
// around an inner expression: open and close n times around it (nesting),
// or open, the inner expression, mid and n links, close (a left-deep
// chain, the inner expression at its bottom).
type nestShape struct {
	name        string
	open, close string
	mid, link   string
}

func (s nestShape) wrap(n int) (prefix, suffix string) {
	if s.link == "" {
		return strings.Repeat(s.open, n), strings.Repeat(s.close, n)
	}
	return s.open, s.mid + strings.Repeat(s.link, n) + s.close
}

// nestShapes are the constructs the limits are held to: every gram.y
// shape that builds a left- or right-deep tree, as expressions.
var nestShapes = []nestShape{
	{name: "plus", link: " + 1"},
	{name: "operator", link: " OPERATOR(pg_catalog.+) 1"},
	{name: "concat", link: " || 'a'"},
	{name: "not", open: "NOT "},
	{name: "prefix", open: "~ "}, // unary minus folds into a constant leaf: another prefix operator
	{name: "isnull", link: " IS NULL"},
	{name: "istrue", link: " IS TRUE"},
	{name: "distinct", open: "(", close: " IS DISTINCT FROM 1)"},
	{name: "cast", link: "::int"},
	{name: "collate", link: ` COLLATE "C"`},
	{name: "timezone", link: " AT TIME ZONE 'UTC'"},
	{name: "crossjoin", open: "(SELECT 1 FROM (SELECT ", mid: ") s", link: " CROSS JOIN sales.regions", close: ")"},
	{name: "join", open: "(SELECT 1 FROM (SELECT ", mid: ") s", link: " JOIN sales.regions ON true", close: ")"},
	{name: "leftjoin", open: "(SELECT 1 FROM (SELECT ", mid: ") s", link: " LEFT JOIN sales.regions ON true", close: ")"},
	{name: "naturaljoin", open: "(SELECT 1 FROM (SELECT ", mid: ") s", link: " NATURAL JOIN sales.regions", close: ")"},
	{name: "union", open: "(SELECT ", link: " UNION ALL SELECT 1", close: ")"},
	{name: "unionparens", open: "((SELECT ", mid: ")", link: " UNION ALL (SELECT 1)", close: ")"},
	{name: "intersect", open: "(SELECT ", link: " INTERSECT SELECT 1", close: ")"},
	{name: "subquery", open: "(SELECT ", close: ")"},
	{name: "fromsubquery", open: "(SELECT * FROM (SELECT ", close: ") s)"},
	{name: "exists", open: "EXISTS (SELECT ", close: ")"},
	{name: "insubquery", open: "1 IN (SELECT ", close: ")"},
	{name: "with", open: "(WITH a AS (SELECT ", close: ") SELECT 1)"},
	{name: "values", open: "(VALUES (", close: "))"},
	{name: "case", open: "CASE WHEN true THEN ", close: " END"},
	{name: "casewhen", open: "CASE WHEN ", close: " THEN 1 END"},
	{name: "function", open: "abs(", close: ")"},
	{name: "coalesce", open: "coalesce(", close: ", 1)"},
	{name: "window", open: "sum(1) OVER (PARTITION BY ", close: ")"},
	{name: "jsonobject", open: "json_object('a' : ", close: ")"},
	{name: "parens", open: "(", close: ")"},
	{name: "array", open: "ARRAY[", close: "]"},
	{name: "subscript", open: "(ARRAY[1])[", close: "]"},
	{name: "row", open: "ROW(", close: ")"},
	{name: "between", open: "1 BETWEEN 0 AND (", close: ")"},
	{name: "inlist", open: "1 IN (", close: ")"},
	{name: "boolean", open: "(true AND (", close: " OR false))"},
}

func shapeNamed(name string) nestShape {
	for _, s := range nestShapes {
		if s.name == name {
			return s
		}
	}
	panic("no shape " + name)
}

type nestItem struct {
	shape nestShape
	n     int
}

// nestSQL is a statement reading a governed table whose select list nests
// items, the first outermost.
func nestSQL(items ...nestItem) string {
	return nestSQLIn("SELECT %s FROM sales.orders", items...)
}

// nestSQLIn puts the nested items where skeleton has %s.
func nestSQLIn(skeleton string, items ...nestItem) string {
	head, tail, _ := strings.Cut(skeleton, "%s")
	var pre strings.Builder
	sufs := make([]string, len(items))
	for i, it := range items {
		p, s := it.shape.wrap(it.n)
		pre.WriteString(p)
		sufs[i] = s
	}
	var b strings.Builder
	b.WriteString(head)
	b.WriteString(pre.String())
	b.WriteString("1")
	for i := len(sufs) - 1; i >= 0; i-- {
		b.WriteString(sufs[i])
	}
	b.WriteString(tail)
	return b.String()
}

// nestMixes interleave or stack constructs, n of each.
var nestMixes = map[string]func(n int) []nestItem{
	// One of each per level: operators, a call, a cast, CASE, a subquery,
	// a join and a union branch.
	"mix-interleaved": func(n int) []nestItem {
		cycle := []string{"plus", "function", "cast", "case", "subquery", "not", "crossjoin", "union", "array"}
		items := make([]nestItem, n)
		for i := range items {
			items[i] = nestItem{shapeNamed(cycle[i%len(cycle)]), 1}
		}
		return items
	},
	// Long runs of each, one below the other.
	"mix-stacked": func(n int) []nestItem {
		return []nestItem{{shapeNamed("union"), n}, {shapeNamed("crossjoin"), n}, {shapeNamed("plus"), n},
			{shapeNamed("case"), n}, {shapeNamed("operator"), n}}
	},
}

// nestingSQL is what the crash test and its children build for a name.
func nestingSQL(name string, n int) string {
	if mix, ok := nestMixes[name]; ok {
		return nestSQL(mix(n)...)
	}
	return nestSQL(nestItem{shapeNamed(name), n})
}

// The scan's estimate is an upper bound on the tree's depth: for every
// construct alone, for mixes, and for random recipes of them.
func TestNestingWeights(t *testing.T) {
	check := func(what, sql string) {
		t.Helper()
		data, err := pgparser.ParseToProtobuf(sql)
		if err != nil {
			t.Errorf("%s: %v\n%s", what, err, sql)
			return
		}
		exact, err := treeDepth(data)
		if err != nil {
			t.Fatal(err)
		}
		est, perr := estimateDepth(sql, noLimit, noLimit)
		if perr != nil {
			t.Fatal(perr)
		}
		if est.levels < exact.levels {
			t.Errorf("%s: the scan estimates %d levels, the tree has %d\n%s", what, est.levels, exact.levels, sql)
		}
	}
	for _, s := range nestShapes {
		for _, n := range []int{1, 2, 3, 8, 21} {
			check(fmt.Sprintf("%s×%d", s.name, n), nestSQL(nestItem{s, n}))
		}
	}
	for name := range nestMixes {
		for _, n := range []int{1, 5, 12} {
			check(fmt.Sprintf("%s×%d", name, n), nestingSQL(name, n))
		}
	}
	rnd := rand.New(rand.NewSource(1))
	for i := 0; i < 400; i++ {
		items := make([]nestItem, 1+rnd.Intn(6))
		for j := range items {
			items[j] = nestItem{nestShapes[rnd.Intn(len(nestShapes))], 1 + rnd.Intn(6)}
		}
		check(fmt.Sprint(items), nestSQL(items...))
	}
	// Statements around the expression: clauses, set operations and
	// data-modifying statements above nested ones.
	for _, sql := range []string{
		"WITH a AS (SELECT (SELECT (SELECT 1))) INSERT INTO sales.regions SELECT * FROM a UNION ALL SELECT (SELECT (SELECT 1 + 1 + 1))",
		"SELECT 1 FROM sales.orders o JOIN (SELECT 1 FROM sales.regions r CROSS JOIN sales.regions r2) s ON o.id = (SELECT abs(abs(1)))",
		"UPDATE sales.orders SET amount = (SELECT CASE WHEN true THEN abs(1 + 1) END) WHERE id IN (SELECT 1 UNION SELECT (SELECT 2))",
		"SELECT count(*) FILTER (WHERE a = (SELECT 1)) OVER (PARTITION BY b ORDER BY (SELECT (SELECT 1))), percentile_cont(0.5) WITHIN GROUP (ORDER BY x + 1 + 1)",
		"SELECT array_agg(x ORDER BY (SELECT (SELECT 1))), json_objectagg(k : (SELECT (SELECT 1)) RETURNING jsonb) OVER (ORDER BY (SELECT 1))",
		"CREATE TABLE t (a int DEFAULT (SELECT 1) CHECK (a > (SELECT (SELECT 1))))",
		"CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT (SELECT 1); CREATE FUNCTION g() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT (SELECT (SELECT 1)); END; END",
		"MERGE INTO sales.orders o USING sales.regions r ON o.region = r.region WHEN MATCHED AND (SELECT true) THEN UPDATE SET amount = (SELECT (SELECT 1))",
		"SELECT * FROM JSON_TABLE('[]', '$' COLUMNS (NESTED PATH '$' COLUMNS (a int PATH '$' DEFAULT (SELECT (SELECT 1)) ON EMPTY)))",
		"SELECT xmlelement(name a, xmlattributes((SELECT (SELECT 1)) AS b)), JSON_VALUE('1', '$' DEFAULT (SELECT (SELECT 1)) ON ERROR)",
		"SELECT 1 BETWEEN (SELECT 1) AND (SELECT (SELECT 1)) + 1 + 1, x IS NOT DISTINCT FROM (SELECT (SELECT 1)) + 1",
	} {
		check(sql, sql)
	}
}

// Child processes: PGRANGER_NESTING_CHILD says what to do, and
// PGRANGER_NESTING_STACK the RLIMIT_STACK to re-execute with.
const (
	nestingChildEnv = "PGRANGER_NESTING_CHILD"
	nestingStackEnv = "PGRANGER_NESTING_STACK"
)

func init() {
	if os.Getenv(nestingChildEnv) != "" {
		// Keep the main thread (whose stack grows to RLIMIT_STACK) to the
		// main goroutine: the tests then run on threads the Go runtime
		// created, with pthread's default stack, as the proxy's do.
		runtime.LockOSThread()
	}
}

// startNestingChild starts the test binary as a child doing what, with a
// smaller C stack when stack > 0.
func startNestingChild(what string, stack int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestNestingChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), nestingChildEnv+"="+what)
	if stack > 0 {
		cmd.Env = append(cmd.Env, nestingStackEnv+"="+strconv.Itoa(stack))
	}
	return cmd
}

// TestNestingChild is the child's side; it does nothing in a normal run.
func TestNestingChild(t *testing.T) {
	what := os.Getenv(nestingChildEnv)
	if what == "" {
		t.Skip("runs as a child of TestNestingCrashDepths and FuzzDeepNesting")
	}
	if s := os.Getenv(nestingStackEnv); s != "" {
		// glibc reads RLIMIT_STACK for its default thread stack when the
		// process starts: set it, then start again.
		stack, _ := strconv.ParseUint(s, 10, 64)
		var rl syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_STACK, &rl); err != nil {
			t.Fatal(err)
		}
		if rl.Cur != stack {
			rl.Cur = stack
			if err := syscall.Setrlimit(syscall.RLIMIT_STACK, &rl); err != nil {
				t.Fatal(err)
			}
			t.Fatal(syscall.Exec(os.Args[0], os.Args, os.Environ()))
		}
	}
	out := bufio.NewWriter(os.Stdout)
	say := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush() // each line must be out before a crash
	}
	rewrite := nestingRewriter(t)
	if what == "worker" {
		nestingWorker(say, rewrite)
		return
	}
	say("limits %d %d %d", limits.StackBytes, limits.TreeLevels, limits.TextLevels)
	accepted := func(n int) bool {
		_, err := parse(nestingSQL(what, n), noLimit, noLimit)
		return err == nil
	}
	levels := func(n int) int {
		data, err := pgparser.ParseToProtobuf(nestingSQL(what, n))
		if err != nil {
			return 0
		}
		p, _ := treeDepth(data)
		return p.levels
	}
	// The largest depth accepted: where the tree's levels, linear in the
	// depth, reach the limit; a binary search when the scan decides first.
	lo := 0
	if d := levels(32) - levels(16); d >= 16 {
		if guess := 16 + (limits.TreeLevels-levels(16))*16/d; guess > 0 && accepted(guess) && !accepted(guess+1) {
			lo = guess
		}
	}
	if lo == 0 {
		hi := 1
		for accepted(hi) && hi < 1<<22 {
			hi *= 2
		}
		lo = hi / 2
		for lo+1 < hi {
			if mid := (lo + hi) / 2; accepted(mid) {
				lo = mid
			} else {
				hi = mid
			}
		}
	}
	say("accept %d %d", lo, levels(lo))
	// From four times the largest accepted depth, 3 % at a time, then
	// faster: the crash depth, or the parser's own refusal.
	n := max(4*lo, 1)
	for step := 0; n < 1<<22; step++ {
		sql := nestingSQL(what, n)
		if len(sql) > 64<<20 {
			break
		}
		say("rewrite %d %s", n, rewrite(sql))
		data, err := pgparser.ParseToProtobuf(sql)
		if err != nil {
			say("clean %d %s", n, strings.ReplaceAll(err.Error(), "\n", " "))
			break
		}
		p, _ := treeDepth(data)
		if _, err := pgparser.DeparseFromProtobuf(data); err != nil {
			say("clean %d %s", n, strings.ReplaceAll(err.Error(), "\n", " "))
			break
		}
		if _, err := pgparser.FingerprintToHexStr(sql); err != nil {
			say("clean %d %s", n, strings.ReplaceAll(err.Error(), "\n", " "))
			break
		}
		say("ok %d %d", n, p.levels)
		if step < 40 {
			n = max(n+1, n*103/100)
		} else {
			n = n * 5 / 4
		}
	}
	say("end")
}

// nestingRewriter rewrites a statement as the proxy would, with no
// configured limit besides the stack's: bob reads sales.orders through
// its masks' wrapper.
func nestingRewriter(t testing.TB) func(sql string) string {
	rw := New(Options{MaxStatementBytes: 1 << 30, MaxNestingDepth: 1 << 30})
	eng, snap := testEngine(t), testCatalog()
	subj := testSubjects["bob"]
	return func(sql string) string {
		sess := &Session{Subject: subj, IdentityKey: IdentityKey(subj), Database: "demo",
			SearchPath: []string{"$user", "public"}, DefaultSearchPath: []string{"$user", "public"}}
		env := &Env{Policy: policy.Snapshot{Engine: eng, Generation: 1}, Catalog: snap, Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		res := rw.Rewrite(context.Background(), env, sess, sql)
		switch {
		case res.Err != nil:
			return res.Err.Code
		case res.Changed:
			return "rewritten"
		}
		return "unchanged"
	}
}

// nestingRun is what a child reported.
type nestingRun struct {
	stack, tree, text int
	accepted, levels  int // the largest depth the checks accept, and its tree's levels
	first             int // the first depth swept: 4 × accepted
	lastOK, okLevels  int // the deepest statement parsed and deparsed
	crash             int // the depth at which the parser crashed, 0 = none
	clean             string
	fault             string // what went wrong besides the expected crash
}

func runNestingChild(name string, stack int) nestingRun {
	cmd := startNestingChild(name, stack)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var r nestingRun
	ended, lastRewrite, last := false, 0, ""
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		num := func(i int) int {
			if i >= len(f) {
				return 0
			}
			v, _ := strconv.Atoi(f[i])
			return v
		}
		last = f[0]
		switch f[0] {
		case "limits":
			r.stack, r.tree, r.text = num(1), num(2), num(3)
		case "accept":
			r.accepted, r.levels, r.first = num(1), num(2), max(4*num(1), 1)
		case "rewrite":
			lastRewrite = num(1)
		case "ok":
			r.lastOK, r.okLevels = num(1), num(2)
		case "clean":
			r.clean = strings.Join(f[1:], " ")
		case "end":
			ended = true
		}
	}
	switch {
	case ended:
	case last == "rewrite" && strings.Contains(stderr.String(), "signal arrived during cgo execution"):
		r.crash = lastRewrite // a C stack overflow: SIGSEGV (SIGBUS on some systems)
	case err != nil:
		tail := stderr.String()
		if len(tail) > 2000 {
			tail = tail[:2000]
		}
		r.fault = fmt.Sprintf("child died after %q (%v):\n%s", last, err, tail)
	}
	return r
}

// nestingOwnStack are the constructs the crash test also runs with this
// process's own stack (the one `make test` and the proxy get, usually
// 8 MiB): operators, joins, set operations and a mix. Every construct runs with
// 2 MiB, glibc's default thread stack when RLIMIT_STACK is unlimited; a
// level costs the same stack at every size, so 2 MiB is the cheaper test
// of the same rule.
var nestingOwnStack = map[string]bool{"plus": true, "crossjoin": true, "union": true, "mix-interleaved": true}

// Each construct alone and a few mixes, in a child process per stack
// size: the largest depth the checks accept, then parse and deparse from
// four times that depth up until the C code crashes (or the grammar
// refuses cleanly). The checks must accept at most a quarter of the crash
// depth, and the rewriter, run first at every depth, must never crash.
func TestNestingCrashDepths(t *testing.T) {
	type run struct {
		name  string
		stack int // 0: this process's
	}
	var runs []run
	for _, s := range nestShapes {
		runs = append(runs, run{s.name, 2 << 20})
	}
	for _, name := range slices.Sorted(maps.Keys(nestMixes)) {
		runs = append(runs, run{name, 2 << 20})
	}
	if limits.StackBytes != 2<<20 {
		for _, name := range slices.Sorted(maps.Keys(nestingOwnStack)) {
			runs = append(runs, run{name, 0})
		}
	}
	for _, run := range runs {
		label := "own"
		if run.stack > 0 {
			label = stackSize(run.stack)
		}
		t.Run(run.name+"/"+label, func(t *testing.T) {
			t.Parallel()
			r := runNestingChild(run.name, run.stack)
			if r.fault != "" {
				t.Fatal(r.fault)
			}
			if r.accepted == 0 {
				t.Fatalf("the checks accept no depth of %s (%s stack)", run.name, stackSize(r.stack))
			}
			at := fmt.Sprintf("%s, %s stack: accepted up to %d (%d levels)", run.name, stackSize(r.stack), r.accepted, r.levels)
			switch {
			case r.crash == 0 && r.clean != "":
				t.Logf("%s; no crash: the grammar refuses %s", at, r.clean)
			case r.crash == 0:
				t.Logf("%s; no crash up to %d (%d levels)", at, r.lastOK, r.okLevels)
			case r.crash <= r.first:
				t.Errorf("%s, the C code crashes at %d: the checks accept more than a quarter of the crash depth", at, r.crash)
			default:
				t.Logf("%s; crashes at %d, %.1f times deeper (the deepest that did not: %d levels)", at, r.crash, float64(r.crash)/float64(r.accepted), r.okLevels)
			}
		})
	}
}

// nestingWorker parses, deparses and rewrites what it reads on stdin (a
// length line, then the text) and answers a line for each: for
// FuzzDeepNesting, which sees it die when a statement crashes it.
func nestingWorker(say func(string, ...any), rewrite func(string) string) {
	in := bufio.NewReader(os.Stdin)
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			return
		}
		size, _ := strconv.Atoi(strings.TrimSpace(line))
		buf := make([]byte, size)
		if _, err := io.ReadFull(in, buf); err != nil {
			return
		}
		sql := string(buf)
		result := rewrite(sql)
		if data, err := pgparser.ParseToProtobuf(sql); err == nil {
			if _, err := pgparser.DeparseFromProtobuf(data); err != nil {
				result += " deparse: " + err.Error()
			}
			pgparser.FingerprintToHexStr(sql)
		}
		say("%s", strings.ReplaceAll(result, "\n", " "))
	}
}

// Where FuzzDeepNesting puts its nestings ("@name" in a recipe).
var nestSkeletons = map[string]string{
	"select": "SELECT %s FROM sales.orders",
	"where":  "SELECT id FROM sales.orders WHERE %s IS NOT NULL",
	"join":   "SELECT o.id FROM sales.orders o JOIN sales.regions r ON r.region = (%s)::text",
	"update": "UPDATE sales.orders SET amount = (%s)::numeric WHERE id = 1",
	"union":  "SELECT %s FROM sales.orders UNION ALL SELECT 1 FROM sales.orders",
	"cte":    "WITH c AS (SELECT %s AS x FROM sales.orders) SELECT * FROM c",
}

// nestRecipe decodes a fuzz input: words "name*count" (or just "name"),
// outermost first, and "@skeleton". An unknown name picks a construct by
// its bytes, so every input builds a statement.
func nestRecipe(recipe string) string {
	skeleton := nestSkeletons["select"]
	var items []nestItem
	size := 0
	for _, word := range strings.FieldsFunc(recipe, func(r rune) bool { return r == ' ' || r == ',' || r == ';' || r == '\n' }) {
		if name, ok := strings.CutPrefix(word, "@"); ok {
			if sk, ok := nestSkeletons[name]; ok {
				skeleton = sk
			}
			continue
		}
		name, count, _ := strings.Cut(word, "*")
		n, err := strconv.Atoi(count)
		if err != nil || n < 1 {
			n = 1
		}
		n = min(n, 100000)
		shape, found := nestShape{}, false
		for _, s := range nestShapes {
			if s.name == name {
				shape, found = s, true
			}
		}
		if !found {
			h := 0
			for _, c := range []byte(name) {
				h = h*31 + int(c)
			}
			shape = nestShapes[(h%len(nestShapes)+len(nestShapes))%len(nestShapes)]
		}
		// At most 4 MB of statement.
		per := len(shape.open) + len(shape.close) + len(shape.link)
		if size+n*per > 4<<20 {
			n = max(0, (4<<20-size)/per)
		}
		size += n * per
		items = append(items, nestItem{shape, n})
	}
	return nestSQLIn(skeleton, items...)
}

// nestingPool is a child process parsing, deparsing and rewriting what the
// fuzz target accepts, with a 2 MiB C stack; restarted after it dies.
var nestingPool struct {
	sync.Mutex
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *bytes.Buffer
}

// nestingWork sends sql to the pool's child; it returns the child's answer,
// or what it printed when it died.
func nestingWork(t *testing.T, sql string) (answer string, died bool) {
	p := &nestingPool
	p.Lock()
	defer p.Unlock()
	if p.cmd == nil {
		cmd := startNestingChild("worker", 2<<20)
		p.stderr = &bytes.Buffer{}
		cmd.Stderr = p.stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		p.cmd, p.in, p.out = cmd, in, bufio.NewReaderSize(out, 1<<16)
	}
	fmt.Fprintf(p.in, "%d\n%s", len(sql), sql)
	line, err := p.out.ReadString('\n')
	if err != nil {
		p.in.Close()
		p.cmd.Wait()
		tail := p.stderr.String()
		if len(tail) > 3000 {
			tail = tail[:3000]
		}
		p.cmd = nil
		return tail, true
	}
	return strings.TrimSpace(line), false
}

// FuzzDeepNesting builds statements from random recipes of the nesting
// constructs (nestShapes), as deep as 100,000 of each, or takes SQL text
// as it is ("sql:…", seeded with the golden cases), and holds the
// checks to two promises: the scan's estimate is never below the tree's
// real depth, and whatever the checks accept for a 2 MiB C stack is
// parsed, deparsed and rewritten by a child process with that stack
// without crashing it. make test runs it for a while (scripts/fuzz.sh);
// testdata/fuzz/FuzzDeepNesting holds the reported crashers.
//
// Run: go test ./sqlrewrite -run '^$' -fuzz FuzzDeepNesting -fuzztime 5m
func FuzzDeepNesting(f *testing.F) {
	for _, seed := range []string{"plus*200", "subquery*80 plus*20", "@where case*100 cast*50", "@join crossjoin*200",
		"@union union*400", "@cte mix*3 function*100 not*100", "@update values*60"} {
		f.Add(seed)
	}
	// Real statements, which mutations turn into odd ones: the scan's
	// keywords and separators in every place the grammar allows them.
	files, _ := filepath.Glob("testdata/rewrite/*.sql")
	for _, file := range files {
		for _, c := range parseCases(f, file) {
			f.Add("sql:" + c.sql)
		}
	}
	lim := limitsFor(2 << 20)
	f.Fuzz(func(t *testing.T, recipe string) {
		sql, ok := strings.CutPrefix(recipe, "sql:")
		if !ok {
			sql = nestRecipe(recipe)
		}
		_, refused := parseWithin(sql, noLimit, noLimit, lim)
		est, err := estimateDepth(sql, noLimit, lim.TextLevels)
		if err != nil {
			t.Fatal(err)
		}
		if est.levels <= lim.TextLevels {
			// The scan let the text through to the parser: its estimate
			// must bound the tree.
			if data, err := pgparser.ParseToProtobuf(sql); err == nil {
				exact, err := treeDepth(data)
				if err != nil {
					t.Fatal(err)
				}
				if est.levels < exact.levels {
					t.Fatalf("the scan estimates %d levels, the tree has %d: %.300s", est.levels, exact.levels, sql)
				}
			}
		}
		if refused != nil {
			return
		}
		if answer, died := nestingWork(t, sql); died {
			t.Fatalf("a statement the checks accept crashed the parser with a 2 MiB stack: %.300s\n%s", sql, answer)
		}
	})
}
