package sqlrewrite

import (
	"strings"
	"testing"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/sqlstate"
)

// TestBuiltinsReviewed walks every function, aggregate and window function
// of PostgreSQL 15's pg_catalog (catalog's embedded table): each must be
// allowed (a family of builtins_*.go) or refused with a reason
// (builtins_refused.go, builtins_internal.go). A newer PostgreSQL's
// functions fail here when the table is regenerated, rather than being
// silently allowed or silently refused; a name on a list that PostgreSQL
// 15 does not have is a typo or a leftover.
func TestBuiltinsReviewed(t *testing.T) {
	names := catalog.Static(1, nil, nil).Builtins.FunctionNames()
	if len(names) < 2600 {
		t.Fatalf("the embedded catalog names %d functions; expected PostgreSQL 15's 2,646", len(names))
	}
	var unreviewed []string
	exists := map[string]bool{}
	for _, n := range names {
		exists[n] = true
		_, allowed := allowedBuiltins[n]
		_, refused := refusedBuiltinReasons[n]
		if !allowed && !refused {
			unreviewed = append(unreviewed, n)
		}
	}
	if len(unreviewed) > 0 {
		t.Errorf("%d pg_catalog functions are neither allowed nor refused with a reason: %s", len(unreviewed), strings.Join(unreviewed, ", "))
	}
	for n, fam := range allowedBuiltins {
		if !exists[n] {
			t.Errorf("the %s family lists %s, which PostgreSQL 15's pg_catalog does not have", fam, n)
		}
	}
	extension := map[string]bool{}
	for _, g := range extensionBuiltins {
		for _, n := range g.functions {
			extension[n] = true
			if exists[n] {
				t.Errorf("%s is an extension's function, but PostgreSQL 15's pg_catalog has it: move it to the lists of built-ins", n)
			}
		}
	}
	for n := range refusedBuiltinReasons {
		if !exists[n] && !extension[n] {
			t.Errorf("%s is refused, but PostgreSQL 15's pg_catalog does not have it", n)
		}
	}
	for _, groups := range [][]refusedBuiltin{refusedBuiltins, internalBuiltins, extensionBuiltins} {
		for _, g := range groups {
			if !strings.HasPrefix(g.reason, "it ") && !strings.HasPrefix(g.reason, "large objects") || strings.HasSuffix(g.reason, ".") {
				t.Errorf("reason %q does not read as the end of a denial", g.reason)
			}
		}
	}
}

// TestBuiltinFamilies pins what each family allows, so that a change to a
// list is a deliberate change to this test too.
func TestBuiltinFamilies(t *testing.T) {
	want := map[string]int{
		"math": 66, "bit and bytea": 5,
		"string": 38, "pattern matching": 14, "formatting": 10, "encoding": 16,
		"date/time":      23,
		"enum and range": 25, "array": 16, "set-returning generators": 3, "json": 52, "xml": 8,
		"text search": 23,
		"network":     12, "uuid": 1, "geometric": 19, "type input and output": 220, "casts": 40,
		"aggregate": 41, "window": 11,
		"catalog introspection": 80, "privileges": 15,
		"session": 25, "advisory locks": 11, "transaction ids and snapshots": 18,
		"WAL positions and recovery state": 13, "sizes": 10,
		"operators": 784,
	}
	got := map[string]int{}
	for _, f := range allowedFamilies {
		got[f.name] = len(f.functions)
	}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("family %s allows %d functions, want %d", name, got[name], n)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d families, want %d", len(got), len(want))
	}
}

// TestOperatorFunctionsAllowed: every pg_catalog operator of PostgreSQL 15
// implements an allowed function, so no built-in operator name is refused.
func TestOperatorFunctionsAllowed(t *testing.T) {
	b := catalog.Static(1, nil, nil).Builtins
	ops := b.OperatorNames()
	if len(ops) < 50 {
		t.Fatalf("the embedded catalog names %d operators", len(ops))
	}
	for _, op := range ops {
		for _, fn := range b.OperatorFunctions(op) {
			if !builtinAllowed(fn) {
				t.Errorf("operator %s implements %s, which is not allowed", op, fn)
			}
		}
	}
}

// The functions PostgreSQL's grammar calls for SQL syntax (EXTRACT,
// SUBSTRING … FROM, TRIM, AT TIME ZONE, OVERLAPS, COLLATION FOR, IS
// NORMALIZED, LIKE … ESCAPE, SIMILAR TO, XMLEXISTS) are allowed: the
// parse tree names them like any call.
func TestSyntaxFunctionsAllowed(t *testing.T) {
	for _, sql := range []string{
		"SELECT extract(year FROM now()), now() AT TIME ZONE 'UTC', substring('abc' FROM 2), position('b' IN 'abc')",
		"SELECT trim(both ' ' FROM ' a '), trim(leading 'x' FROM 'xa'), trim(trailing 'x' FROM 'ax'), overlay('abc' PLACING 'x' FROM 2)",
		"SELECT 'a' IS NORMALIZED, normalize('a', NFC), collation for ('a'), (now(), now()) OVERLAPS (now(), now())",
		"SELECT 'a' LIKE 'b' ESCAPE '!', 'a' SIMILAR TO 'b', substring('abc' SIMILAR 'a#\"b#\"c' ESCAPE '#'), xmlexists('//a' PASSING ('<a/>'::xml))",
	} {
		if res := rewriteAs(t, "bob", sql, Options{}); res.Err != nil {
			t.Errorf("%s: %s", sql, res.Err.Message)
		}
	}
}

// An operator that an extension put into pg_catalog, implemented by a
// function that is not allowed, is refused where its name is used —
// unless the operands resolve the name exactly to an allowed operator.
func TestOperatorWithRefusedFunction(t *testing.T) {
	// tid = tid implemented by currtid2, and a new @@@ on tid implemented
	// by a function nobody reviewed.
	b, err := catalog.BuiltinsPG15With(
		"o\t=\t27\t27\t16\tf\tv\tcurrtid2",
		"o\t@@@\t27\t27\t16\tf\tv\tsome_ext_tid_probe",
	)
	if err != nil {
		t.Fatal(err)
	}
	snap := testCatalog()
	snap.Builtins = b
	cases := []struct{ sql, err string }{
		// Resolved exactly: integers compare with int4eq.
		{"SELECT 1 = 1", ""},
		{"SELECT id FROM public.orders WHERE id = 2", ""},
		{"SELECT id FROM public.orders WHERE id BETWEEN 1 AND 2", ""},
		// Resolved exactly to the refused one.
		{"SELECT '(0,1)'::tid = '(0,1)'::tid",
			`operator = is not allowed through pgranger: it calls function currtid2, which is not allowed (user "bob")`},
		// Types not certain (two untyped literals): refused by name.
		{"SELECT 1 WHERE '1' = '1'",
			`operator = is not allowed through pgranger: it may call function currtid2, which is not allowed (user "bob")`},
		{"SELECT 1 WHERE 1 IN (1, 2)",
			`operator = is not allowed through pgranger: it may call function currtid2, which is not allowed (user "bob")`},
		{"SELECT '(0,1)'::tid @@@ '(0,1)'::tid",
			`operator @@@ is not allowed through pgranger: it calls function some_ext_tid_probe, which is not allowed (user "bob")`},
		{"SELECT 1 OPERATOR(pg_catalog.@@@) 2",
			`operator @@@ is not allowed through pgranger: it may call function some_ext_tid_probe, which is not allowed (user "bob")`},
		{"SELECT id FROM public.orders ORDER BY id USING =",
			`operator = is not allowed through pgranger: it may call function currtid2, which is not allowed (user "bob")`},
		{"SELECT 1 WHERE 1 = ANY (SELECT id FROM public.orders)",
			`operator = is not allowed through pgranger: it may call function currtid2, which is not allowed (user "bob")`},
	}
	for _, c := range cases {
		res := rewriteIn(t, snap, "bob", c.sql, Options{})
		switch {
		case c.err == "" && res.Err != nil:
			t.Errorf("%s: %s", c.sql, res.Err.Message)
		case c.err != "" && res.Err == nil:
			t.Errorf("%s: allowed, want %s", c.sql, c.err)
		case c.err != "" && (res.Err.Code != sqlstate.InsufficientPrivilege || res.Err.Message != "pgranger: "+c.err):
			t.Errorf("%s: %s %s, want 42501 %s", c.sql, res.Err.Code, res.Err.Message, c.err)
		}
	}
}
