package sqlrewrite

import (
	"errors"
	"math"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/pgranger/pgranger/sqlrewrite/cstack"
	"github.com/pgranger/pgranger/sqlstate"
)

// This file is the only one that calls pg_query's C code with SQL text or
// a tree (TestCParserOnlyBehindTheLimits): parse, deparse and fingerprint
// keep every tree within a quarter of the C stack (limits.go says why).

// C stack, in bytes, one level of a serialised tree costs, rounded up from
// what TestNestingCrashDepths measures on x86_64 (gcc 12, glibc 2.36):
// pg_query's deparser (protobuf-c's unpacking and the deparser itself)
// about 945 bytes per level whatever the node, its parser and serialiser
// about 176. Fingerprinting stops at 100 levels.
const (
	deparseBytesPerLevel = 1024
	parseBytesPerLevel   = 192
	// Go's protobuf decoder refuses trees deeper than 10,000 messages:
	// beyond this, the limit's message is ours rather than its error.
	maxTreeLevels = 8000
)

// NestingLimits are how deep a tree this process lets pg_query handle.
type NestingLimits struct {
	// StackBytes is the C stack a cgo call can count on (cstack.Size):
	// RLIMIT_STACK at start, or glibc's default thread stack (2 MiB) when
	// that is unlimited.
	StackBytes int
	// TreeLevels is the most levels a parse tree may have, a quarter of
	// the stack at deparseBytesPerLevel: an operator, a join or a cast is
	// two levels, a UNION branch one, a scalar subquery six.
	TreeLevels int
	// TextLevels is the most levels the scan before parsing may estimate,
	// a quarter of the stack at parseBytesPerLevel. The estimate is an
	// upper bound, so this limit is the looser one; the tree's exact depth
	// is checked against TreeLevels once parsed.
	TextLevels int
}

func limitsFor(stack int) NestingLimits {
	return NestingLimits{StackBytes: stack, TreeLevels: min(stack/4/deparseBytesPerLevel, maxTreeLevels), TextLevels: stack / 4 / parseBytesPerLevel}
}

// limits are this process's, fixed at start: glibc fixes the default
// thread stack then, and the Go runtime starts every thread with it.
var limits = limitsFor(processStack())

// processStack is cstack.Size, or 1 MiB, less than any default thread
// stack pgranger is built for, when it cannot be known.
func processStack() int {
	if s := cstack.Size(); s > 0 {
		return s
	}
	return 1 << 20
}

// CurrentNestingLimits returns this process's limits.
func CurrentNestingLimits() NestingLimits { return limits }

// Allowed is the sentence a refusal ends with: "at most 2,048 levels are
// allowed with this process's 8 MiB C stack (ulimit -s)".
func (l NestingLimits) Allowed() string {
	return "at most " + thousands(l.TreeLevels) + " levels are allowed with this process's " + stackSize(l.StackBytes) + " C stack (ulimit -s)"
}

// noLimit disables the configurable limits for texts that are not a
// client's: pgranger's own SQL, policy expressions, view definitions.
const noLimit = math.MaxInt

// parse parses sql with PostgreSQL's grammar once it has passed the scan
// (limits.go) and checks the tree's exact depth before Go decodes it or
// anything deparses it.
func parse(sql string, maxBytes, maxNesting int) (*pg.ParseResult, *Error) {
	return parseWithin(sql, maxBytes, maxNesting, limits)
}

// Parse is parse for the packages that read statements besides the
// rewriter (authoring): the same limits on the text's size and nesting
// and on the tree's depth, the same errors.
func Parse(sql string, maxBytes, maxNesting int) (*pg.ParseResult, *Error) {
	return parse(sql, maxBytes, maxNesting)
}

// Deparse is deparse for the same packages and for test tools that
// round-trip SQL as the rewriter sends it (internal/interop/maskdiff).
func Deparse(tree *pg.ParseResult) (string, *Error) {
	return deparse(tree)
}

// LabelIsNull reports whether a SECURITY LABEL statement, which parse
// accepted, says IS NULL: the Go tree gives "" for IS NULL and for an empty
// label alike, pg_query's JSON leaves the label out for NULL.
func LabelIsNull(sql string, maxBytes, maxNesting int) (bool, *Error) {
	if _, err := parse(sql, maxBytes, maxNesting); err != nil {
		return false, err
	}
	js, err := pg.ParseToJSON(sql)
	if err != nil {
		return false, parseError(err)
	}
	return !strings.Contains(js, `"label":`), nil
}

func parseWithin(sql string, maxBytes, maxNesting int, lim NestingLimits) (*pg.ParseResult, *Error) {
	if err := checkComplexity(sql, maxBytes, maxNesting, lim); err != nil {
		return nil, err
	}
	data, err := pgparser.ParseToProtobuf(sql)
	if err != nil {
		return nil, parseError(err)
	}
	if e := checkTreeDepth(data, "statement is nested too deeply to analyse safely", lim); e != nil {
		return nil, e
	}
	tree := &pg.ParseResult{}
	if err := proto.Unmarshal(data, tree); err != nil {
		return nil, parseError(err)
	}
	return tree, nil
}

// deparse renders tree as SQL text, refusing a tree too deep for the
// deparser: a statement whose own tree passed can grow past the limit
// with its wrappers, views and policy expressions.
func deparse(tree *pg.ParseResult) (string, *Error) {
	data, err := proto.Marshal(tree)
	if err != nil {
		return "", errorf(sqlstate.FeatureNotSupported, "cannot render the rewritten statement: %v", err)
	}
	if e := checkTreeDepth(data, "the rewritten statement is nested too deeply to render safely", limits); e != nil {
		return "", e
	}
	out, err := pgparser.DeparseFromProtobuf(data)
	if err != nil {
		return "", errorf(sqlstate.FeatureNotSupported, "cannot render the rewritten statement: %v", err)
	}
	return out, nil
}

// fingerprint is pg_query's fingerprint of sql ("" when it has none): it
// parses sql again, so the scan must pass first.
func fingerprint(sql string) string {
	if checkComplexity(sql, noLimit, noLimit, limits) != nil {
		return ""
	}
	fp, err := pg.Fingerprint(sql)
	if err != nil {
		return ""
	}
	return fp
}

func parseError(err error) *Error {
	var pe *pgparser.Error
	if errors.As(err, &pe) {
		if strings.Contains(pe.Message, "memory exhausted") || strings.Contains(pe.Message, "stack depth") {
			// Bison's own stack (YYMAXDEPTH) refuses deep right nesting
			// cleanly.
			return errorf(sqlstate.StatementTooComplex, "statement is too complex to parse: %s", pe.Message)
		}
		return &Error{Code: sqlstate.SyntaxError, Message: pe.Message, Position: int32(pe.Cursorpos)}
	}
	// Not the grammar's error: the tree could not be decoded.
	return errorf(sqlstate.StatementTooComplex, "statement is too complex to parse: %v", err)
}

func checkTreeDepth(data []byte, refusal string, lim NestingLimits) *Error {
	p, err := treeDepth(data)
	if err != nil {
		return errorf(sqlstate.StatementTooComplex, "%s: its parse tree cannot be measured (%v)", refusal, err)
	}
	if p.levels <= lim.TreeLevels {
		return nil
	}
	what := ""
	if w := p.what(); w != "" {
		what = " (" + w + " on one path)"
	}
	return errorf(sqlstate.StatementTooComplex, "%s: its parse tree is %s levels deep%s; %s", refusal, thousands(p.levels), what, lim.Allowed())
}

// nodeKinds name the constructs a refusal counts along the deepest path.
var nodeKinds = map[protoreflect.FullName]nestKind{
	"pg_query.A_Expr": nestOperator, "pg_query.BoolExpr": nestOperator, "pg_query.NullTest": nestOperator,
	"pg_query.BooleanTest": nestOperator, "pg_query.TypeCast": nestOperator, "pg_query.CollateClause": nestOperator,
	"pg_query.A_Indirection": nestOperator, "pg_query.NamedArgExpr": nestOperator,
	"pg_query.JoinExpr":   nestJoin,
	"pg_query.SelectStmt": nestQuery, "pg_query.InsertStmt": nestQuery, "pg_query.UpdateStmt": nestQuery,
	"pg_query.DeleteStmt": nestQuery, "pg_query.MergeStmt": nestQuery,
	"pg_query.CaseExpr": nestCase,
	"pg_query.FuncCall": nestGroup, "pg_query.A_ArrayExpr": nestGroup, "pg_query.RowExpr": nestGroup,
	"pg_query.CoalesceExpr": nestGroup, "pg_query.MinMaxExpr": nestGroup, "pg_query.A_Indices": nestGroup,
}

// msgShape is what treeDepth needs of a message type: the types of its
// message fields by field number, and what a refusal counts it as.
type msgShape struct {
	fields     []*msgShape // nil where the field is not a message
	kind       int8        // a nestKind, or -1
	selectStmt bool        // its larg and rarg are set operations
}

// parseResultShape is the tree's root, with every message type reachable
// from it, built once.
var parseResultShape = func() *msgShape {
	shapes := map[protoreflect.FullName]*msgShape{}
	var build func(md protoreflect.MessageDescriptor) *msgShape
	build = func(md protoreflect.MessageDescriptor) *msgShape {
		if s, ok := shapes[md.FullName()]; ok {
			return s
		}
		s := &msgShape{kind: -1, selectStmt: md.FullName() == "pg_query.SelectStmt"}
		shapes[md.FullName()] = s
		if k, ok := nodeKinds[md.FullName()]; ok {
			s.kind = int8(k)
		}
		fields := md.Fields()
		for i := 0; i < fields.Len(); i++ {
			fd := fields.Get(i)
			if fd.Kind() != protoreflect.MessageKind {
				continue
			}
			for int(fd.Number()) >= len(s.fields) {
				s.fields = append(s.fields, nil)
			}
			s.fields[fd.Number()] = build(fd.Message())
		}
		return s
	}
	return build((&pg.ParseResult{}).ProtoReflect().Descriptor())
}()

// treeDepth measures a serialised ParseResult: its depth in levels (nested
// messages, which pg_query's C code recurses on one by one) and what its
// deepest path crosses. It walks the bytes with a stack of its own, so no
// depth is too much for it.
func treeDepth(data []byte) (depthPath, error) {
	type open struct {
		end   int
		shape *msgShape
		kind  int8 // counted as, or -1
	}
	stack := []open{{end: len(data), shape: parseResultShape, kind: -1}}
	var cur, best depthPath
	cur.levels, best.levels = 1, 1
	for i := 0; i < len(data); {
		for i >= stack[len(stack)-1].end {
			if k := stack[len(stack)-1].kind; k >= 0 {
				cur.n[k]--
			}
			stack = stack[:len(stack)-1]
			cur.levels--
		}
		num, typ, n := protowire.ConsumeTag(data[i:])
		if n < 0 {
			return best, protowire.ParseError(n)
		}
		i += n
		parent := stack[len(stack)-1].shape
		if typ == protowire.BytesType {
			size, n := protowire.ConsumeVarint(data[i:])
			if n < 0 || size > uint64(len(data)-i-n) {
				return best, errors.New("truncated field")
			}
			i += n
			if int(num) < len(parent.fields) && parent.fields[num] != nil {
				child := parent.fields[num]
				kind := child.kind
				if kind == int8(nestQuery) && parent.selectStmt {
					kind = int8(nestSetOperation) // larg, rarg
				}
				if kind >= 0 {
					cur.n[kind]++
				}
				stack = append(stack, open{end: i + int(size), shape: child, kind: kind})
				cur.levels++
				if cur.levels > best.levels {
					best = cur
				}
				continue
			}
			i += int(size)
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, data[i:])
		if n < 0 {
			return best, protowire.ParseError(n)
		}
		i += n
	}
	return best, nil
}

// stackSize formats a stack size: "8 MiB", "512 KiB".
func stackSize(b int) string {
	switch {
	case b >= 1<<20 && b%(1<<20) == 0:
		return thousands(b>>20) + " MiB"
	case b >= 1<<10 && b%(1<<10) == 0:
		return thousands(b>>10) + " KiB"
	}
	return thousands(b) + " bytes"
}
