package sqlrewrite

import "fmt"

// Built-in functions (docs/security.md "Functions"). A user's call of a
// pg_catalog function is forwarded only when its name is on an allow list
// below: families of functions grouped in the builtins_*.go files, each
// with a comment saying why its functions are safe to call on whatever a
// user's query can see. Every other pg_catalog function is refused
// (42501) — the ones reviewed and refused (refusedBuiltins,
// internalBuiltins, extensionBuiltins) with their reason in the denial, and any other name,
// such as one a newer PostgreSQL adds or an extension installs into
// pg_catalog, because nobody reviewed it. TestBuiltinsReviewed fails when
// a function of the embedded PostgreSQL 15 catalog is on neither kind of
// list, so a new version's functions show up as a failing test.
//
// The lists name functions, not overloads: a name is allowed or refused
// with all its overloads (the rewriter sees names, and PostgreSQL picks
// the overload after pgranger has decided).

// builtinFamily is one family of allowed pg_catalog functions.
type builtinFamily struct {
	name      string
	functions []string
}

// refusedBuiltin is a group of pg_catalog functions refused for one
// reason, which the denial gives.
type refusedBuiltin struct {
	reason    string
	functions []string
}

// allowedFamilies are every family of allowed functions.
var allowedFamilies = []builtinFamily{
	mathFunctions, bitFunctions,
	stringFunctions, patternFunctions, formattingFunctions, encodingFunctions,
	dateTimeFunctions,
	rangeFunctions, arrayFunctions, seriesFunctions, jsonFunctions, xmlFunctions,
	textSearchFunctions,
	networkFunctions, uuidFunctions, geometryFunctions, typeIOFunctions, castFunctions,
	aggregateFunctions, windowFunctions,
	catalogFunctions, privilegeFunctions,
	sessionFunctions, lockFunctions, transactionFunctions, walFunctions, sizeFunctions,
	operatorFunctions,
}

var (
	// allowedBuiltins maps an allowed function's name to its family.
	allowedBuiltins = map[string]string{}
	// refusedBuiltinReasons maps a reviewed and refused function's name
	// to the reason its denial gives.
	refusedBuiltinReasons = map[string]string{}
)

func init() {
	// A name on two lists would make its fate depend on which is read
	// first: that is a programming error, found at the first test run.
	for _, f := range allowedFamilies {
		for _, n := range f.functions {
			if prev, dup := allowedBuiltins[n]; dup {
				panic(fmt.Sprintf("sqlrewrite: built-in %s is in the %s and %s families", n, prev, f.name))
			}
			allowedBuiltins[n] = f.name
		}
	}
	for _, groups := range [][]refusedBuiltin{refusedBuiltins, internalBuiltins, extensionBuiltins} {
		for _, g := range groups {
			for _, n := range g.functions {
				if _, dup := refusedBuiltinReasons[n]; dup {
					panic(fmt.Sprintf("sqlrewrite: built-in %s is refused twice", n))
				}
				if fam, dup := allowedBuiltins[n]; dup {
					panic(fmt.Sprintf("sqlrewrite: built-in %s is both refused and in the %s family", n, fam))
				}
				refusedBuiltinReasons[n] = g.reason
			}
		}
	}
}

// builtinAllowed reports whether a call of the pg_catalog function name
// may be forwarded.
func builtinAllowed(name string) bool {
	_, ok := allowedBuiltins[name]
	return ok
}
