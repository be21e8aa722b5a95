package catalog

import (
	"context"
	_ "embed"
	"fmt"
	"hash"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Builtins is what the rewriter knows of the backend's operators,
// functions and types, to decide whether a user's predicate is leakproof
// (docs/security.md "The barrier"): the operators and functions of
// pg_catalog with their argument and result types, leakproof flag and
// volatility, and the operators and type names that other schemas also
// have (those may resolve to something else, so the rewriter treats them
// as unknown).
//
// It is loaded with the rest of the snapshot from the backend; Static
// snapshots (tests, `pgranger check` without a backend) use the tables of
// PostgreSQL 15 embedded below, which TestBuiltinsMatchServer compares
// with a real server.
type Builtins struct {
	operators map[OperatorKey]Operator
	funcs     map[string][]Function
	aggs      map[string]bool
	windows   map[string]bool     // window functions (prokind 'w')
	opFuncs   map[string][]string // operator name → implementing functions
	types     map[string]uint32   // pg_catalog type name → OID
	elems     map[uint32]uint32   // array type OID → element type OID
	// shadowedOps have an operator of the same name and argument types
	// outside pg_catalog; shadowedTypes are type names used outside
	// pg_catalog too. A search_path could make the backend pick those.
	shadowedOps   map[OperatorKey]bool
	shadowedTypes map[string]bool
	// opVolatility is, per operator name, the least strict volatility
	// of pg_catalog's operators of that name (Volatile when another
	// schema has one of the name too).
	opVolatility map[string]Volatility
}

// OperatorKey names one operator: its name and argument types (0 for the
// missing side of a prefix operator).
type OperatorKey struct {
	Name        string
	Left, Right uint32
}

// Operator is one pg_catalog operator.
type Operator struct {
	Result     uint32
	Leakproof  bool // of the function implementing it (pg_proc.proleakproof)
	Volatility Volatility
	Function   string // the pg_catalog function implementing it (pg_operator.oprcode)
}

// Function is one pg_catalog function (prokind 'f').
type Function struct {
	Args       []uint32
	Result     uint32
	Leakproof  bool
	Volatility Volatility
	Variadic   bool
	RetSet     bool
}

// Volatility is pg_proc.provolatile: whether PostgreSQL may evaluate a
// call once for a whole statement (immutable: at plan time, when every
// argument is a constant), once per scan (stable) or must call it for
// every row (volatile).
type Volatility byte

const (
	Immutable Volatility = 'i'
	Stable    Volatility = 's'
	Volatile  Volatility = 'v'
)

func (v Volatility) valid() bool { return v == Immutable || v == Stable || v == Volatile }

// Type OIDs the rewriter's type inference uses.
const (
	OIDBool        = 16
	OIDInt8        = 20
	OIDInt2        = 21
	OIDInt4        = 23
	OIDText        = 25
	OIDFloat4      = 700
	OIDFloat8      = 701
	OIDUnknown     = 705
	OIDBpchar      = 1042
	OIDVarchar     = 1043
	OIDDate        = 1082
	OIDTime        = 1083
	OIDTimestamp   = 1114
	OIDTimestampTZ = 1184
	OIDInterval    = 1186
	OIDTimeTZ      = 1266
	OIDNumeric     = 1700
)

// Operator finds the pg_catalog operator of that name and exact argument
// types. It reports false when there is none, or when another schema has
// one of the same name and argument types (a search_path could make the
// backend pick that one).
func (b *Builtins) Operator(name string, left, right uint32) (Operator, bool) {
	k := OperatorKey{name, left, right}
	if b == nil || b.shadowedOps[k] {
		return Operator{}, false
	}
	o, ok := b.operators[k]
	return o, ok
}

// OperatorVolatility is the least strict volatility among the operators
// of that name, whatever their argument types: Immutable only when every
// pg_catalog operator of the name is immutable and no other schema has
// one; Volatile for a name it does not know.
func (b *Builtins) OperatorVolatility(name string) Volatility {
	if b == nil {
		return Volatile
	}
	if v, ok := b.opVolatility[name]; ok {
		return v
	}
	return Volatile
}

// Functions returns the pg_catalog functions of that name (the rewriter
// qualifies every call of a built-in with pg_catalog, so no other schema
// takes part).
func (b *Builtins) Functions(name string) []Function {
	if b == nil {
		return nil
	}
	return b.funcs[name]
}

// IsAggregate reports whether pg_catalog has an aggregate of that name.
func (b *Builtins) IsAggregate(name string) bool { return b != nil && b.aggs[name] }

// FunctionNames returns the names of every pg_catalog function, aggregate
// and window function, sorted: what a call of a built-in can name.
func (b *Builtins) FunctionNames() []string {
	if b == nil {
		return nil
	}
	seen := map[string]bool{}
	for n := range b.funcs {
		seen[n] = true
	}
	for n := range b.aggs {
		seen[n] = true
	}
	for n := range b.windows {
		seen[n] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// OperatorNames returns the names of pg_catalog's operators, sorted.
func (b *Builtins) OperatorNames() []string {
	if b == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(b.opFuncs))
}

// OperatorFunctions returns the functions implementing the pg_catalog
// operators of that name (one per operator, in no particular order).
func (b *Builtins) OperatorFunctions(name string) []string {
	if b == nil {
		return nil
	}
	return b.opFuncs[name]
}

// TypeOID finds a pg_catalog type by name; false when there is none or
// another schema has a type of that name.
func (b *Builtins) TypeOID(name string) (uint32, bool) {
	if b == nil || b.shadowedTypes[name] {
		return 0, false
	}
	oid, ok := b.types[name]
	return oid, ok
}

// ElemType is the element type of an array type (false for other types).
func (b *Builtins) ElemType(array uint32) (uint32, bool) {
	if b == nil {
		return 0, false
	}
	e, ok := b.elems[array]
	return e, ok
}

// The catalog queries return rows in the line format of the embedded
// table (one parser for both):
//
//	o <name> <left> <right> <result> <leakproof> <volatility> <function>    pg_catalog operator
//	f <name> <args,…> <result> <leakproof> <volatility> <variadic> <retset>
//	a <name>                                               pg_catalog aggregate
//	w <name>                                               pg_catalog window function
//	t <name> <oid> <elem>                                  pg_catalog type
//	O <name> <left> <right>                                operator outside pg_catalog
//	T <name>                                               type name used outside pg_catalog
//
// fields separated by tabs, booleans as t/f, volatility as pg_proc's
// provolatile (i, s or v).
const builtinsSQL = `
SELECT pg_catalog.concat_ws(E'\t', 'o', o.oprname, o.oprleft, o.oprright, o.oprresult, p.proleakproof, p.provolatile, p.proname)
FROM pg_catalog.pg_operator o JOIN pg_catalog.pg_proc p ON p.oid = o.oprcode
WHERE o.oprnamespace = 'pg_catalog'::pg_catalog.regnamespace
UNION ALL
SELECT pg_catalog.concat_ws(E'\t', 'f', p.proname, pg_catalog.array_to_string(p.proargtypes::pg_catalog.oid[], ','), p.prorettype,
       p.proleakproof, p.provolatile, p.provariadic <> 0, p.proretset)
FROM pg_catalog.pg_proc p
WHERE p.pronamespace = 'pg_catalog'::pg_catalog.regnamespace AND p.prokind = 'f'
UNION ALL
SELECT DISTINCT pg_catalog.concat_ws(E'\t', 'a', p.proname)
FROM pg_catalog.pg_proc p
WHERE p.pronamespace = 'pg_catalog'::pg_catalog.regnamespace AND p.prokind = 'a'
UNION ALL
SELECT DISTINCT pg_catalog.concat_ws(E'\t', 'w', p.proname)
FROM pg_catalog.pg_proc p
WHERE p.pronamespace = 'pg_catalog'::pg_catalog.regnamespace AND p.prokind = 'w'
UNION ALL
SELECT pg_catalog.concat_ws(E'\t', 't', t.typname, t.oid, t.typelem)
FROM pg_catalog.pg_type t
WHERE t.typnamespace = 'pg_catalog'::pg_catalog.regnamespace
UNION ALL
SELECT DISTINCT pg_catalog.concat_ws(E'\t', 'O', o.oprname, o.oprleft, o.oprright)
FROM pg_catalog.pg_operator o WHERE o.oprnamespace <> 'pg_catalog'::pg_catalog.regnamespace
UNION ALL
SELECT DISTINCT pg_catalog.concat_ws(E'\t', 'T', t.typname)
FROM pg_catalog.pg_type t WHERE t.typnamespace <> 'pg_catalog'::pg_catalog.regnamespace
  AND t.typname IN (SELECT typname FROM pg_catalog.pg_type WHERE typnamespace = 'pg_catalog'::pg_catalog.regnamespace)`

// builtinsPG15 is builtinsSQL's answer on a fresh PostgreSQL 15 database
// (pg_catalog lines only), sorted.
//
//go:embed builtins_pg15.tsv
var builtinsPG15 string

// defaultBuiltins is builtinsPG15 parsed once.
var defaultBuiltins = func() *Builtins {
	b, err := BuiltinsPG15With()
	if err != nil {
		panic(fmt.Sprintf("catalog: embedded builtins: %v", err))
	}
	return b
}()

// BuiltinsPG15With is the embedded PostgreSQL 15 table with extra lines
// in builtinsSQL's format added: what a server with an extension's
// functions or operators in pg_catalog would answer, for tests.
func BuiltinsPG15With(extra ...string) (*Builtins, error) {
	b := newBuiltins()
	for _, line := range append(strings.Split(builtinsPG15, "\n"), extra...) {
		if line != "" {
			if err := b.add(line); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

func newBuiltins() *Builtins {
	return &Builtins{
		operators:     map[OperatorKey]Operator{},
		funcs:         map[string][]Function{},
		aggs:          map[string]bool{},
		windows:       map[string]bool{},
		opFuncs:       map[string][]string{},
		types:         map[string]uint32{},
		elems:         map[uint32]uint32{},
		shadowedOps:   map[OperatorKey]bool{},
		shadowedTypes: map[string]bool{},
		opVolatility:  map[string]Volatility{},
	}
}

// laxer returns the less strict of two volatilities (the zero value
// counts as unset).
func laxer(a, b Volatility) Volatility {
	rank := map[Volatility]int{0: -1, Immutable: 0, Stable: 1, Volatile: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// loadBuiltins runs builtinsSQL in tx, adding each line to h.
func loadBuiltins(ctx context.Context, tx pgx.Tx, h hash.Hash64) (*Builtins, error) {
	rows, err := tx.Query(ctx, builtinsSQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	b := newBuiltins()
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return nil, err
		}
		if err := b.add(line); err != nil {
			return nil, err
		}
		h.Write([]byte(line))
		h.Write([]byte{0})
	}
	return b, rows.Err()
}

func volatility(s string) Volatility {
	if len(s) != 1 {
		return 0
	}
	return Volatility(s[0])
}

func (b *Builtins) add(line string) error {
	f := strings.Split(line, "\t")
	bad := fmt.Errorf("unreadable builtins line %q", line)
	oid := func(s string) uint32 {
		v, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			f = nil // reported below
		}
		return uint32(v)
	}
	switch {
	case f[0] == "o" && len(f) == 8:
		k := OperatorKey{Name: f[1], Left: oid(f[2]), Right: oid(f[3])}
		o := Operator{Result: oid(f[4]), Leakproof: f[5] == "t", Volatility: volatility(f[6]), Function: f[7]}
		if f == nil || !o.Volatility.valid() {
			return bad
		}
		b.operators[k] = o
		b.opVolatility[k.Name] = laxer(b.opVolatility[k.Name], o.Volatility)
		b.opFuncs[k.Name] = append(b.opFuncs[k.Name], o.Function)
	case f[0] == "f" && len(f) == 8:
		fn := Function{Result: oid(f[3]), Leakproof: f[4] == "t", Volatility: volatility(f[5]), Variadic: f[6] == "t", RetSet: f[7] == "t"}
		if f[2] != "" {
			for _, a := range strings.Split(f[2], ",") {
				fn.Args = append(fn.Args, oid(a))
			}
		}
		if f == nil || !fn.Volatility.valid() {
			return bad
		}
		b.funcs[f[1]] = append(b.funcs[f[1]], fn)
	case f[0] == "a" && len(f) == 2:
		b.aggs[f[1]] = true
	case f[0] == "w" && len(f) == 2:
		b.windows[f[1]] = true
	case f[0] == "t" && len(f) == 4:
		o, e := oid(f[2]), oid(f[3])
		if f == nil {
			return bad
		}
		b.types[f[1]] = o
		if e != 0 && strings.HasPrefix(f[1], "_") {
			b.elems[o] = e
		}
	case f[0] == "O" && len(f) == 4:
		k := OperatorKey{Name: f[1], Left: oid(f[2]), Right: oid(f[3])}
		if f == nil {
			return bad
		}
		b.shadowedOps[k] = true
		b.opVolatility[k.Name] = Volatile
	case f[0] == "T" && len(f) == 2:
		b.shadowedTypes[f[1]] = true
	default:
		return bad
	}
	return nil
}
