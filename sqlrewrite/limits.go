package sqlrewrite

import (
	"strconv"
	"strings"

	"github.com/pgranger/pgranger/sqlstate"
)

// PostgreSQL's grammar builds a tree, and pg_query's C code — the
// serialiser after parsing, protobuf-c, the deparser — recurses once per
// level of it on the C stack of the calling thread. A tree too deep for
// that stack kills the whole process (no recover() can catch a C stack
// overflow), and left-recursive chains (a+b+c…, t CROSS JOIN t …,
// SELECT … UNION ALL SELECT …) grow the tree without growing bison's own
// stack, so the grammar never refuses them. Two checks keep every tree
// within a quarter of the stack (parse.go): this scan, before the text
// reaches the parser, and an exact measure of the tree before it reaches
// the deparser.
//
// A level is one protobuf message of the serialised tree (parse.go,
// treeDepth): pg_query's C passes spend the same stack per message
// whatever its node type, measured by TestNestingCrashDepths. The scan
// computes, per group of the text (parentheses, brackets, CASE … END), an
// upper bound on the levels the group can produce: the operators of an
// expression segment plus the deepest group inside it, the joins and the
// SELECT of a set-operation branch above that, and the set operations and
// data-modifying keywords of the group above all its branches. The bound
// holds for any mix of constructs, because every construct that adds a
// level counts where it stands and only list separators start a new
// segment: commas, AND and OR (whose lists makeAndExpr and makeOrExpr
// flatten) and the keywords that start a clause.

// Levels the scan counts per construct, each at least what the construct
// adds to pg_query's serialised tree (a node is itself and its Node
// wrapper: two levels). TestNestingWeights holds them to the parser.
const (
	// The statement's wrappers (ParseResult, RawStmt, its Node), clause
	// containers of DDL (ColumnDef, Constraint …) and the deepest leaf (a
	// TypeCast's TypeName with modifiers).
	levelsStatement = 24
	// A_Expr, BoolExpr (NOT), NullTest, BooleanTest, TypeCast,
	// CollateClause, timezone() for AT TIME ZONE …
	levelsOperator = 2
	// BETWEEN (an A_Expr over a List of its bounds), SIMILAR TO (an A_Expr
	// over a similar_to_escape call).
	levelsWideOperator = 4
	levelsJoin         = 2 // JoinExpr
	levelsSetOperation = 1 // a SelectStmt's larg or rarg
	// SelectStmt or INSERT/UPDATE/DELETE/MERGE, with the container of its
	// clause's expressions (ResTarget, SortBy, WindowDef, RangeFunction's
	// List, WithClause and CommonTableExpr …).
	levelsQuery = 6
	levelsWith  = 2 // WITH: its clause and CTE wrappers ahead of the SELECT's own
	// Parentheses right after a name: a call (FuncCall, with SortBy for
	// its ORDER BY, NamedArgExpr, the WindowDef of OVER …) or a type's
	// modifiers.
	levelsCall = 4
	// Other parentheses: a subquery (SubLink, RangeSubselect), a row or an
	// IN list (RowExpr, List), (x).field (A_Indirection), or just grouping.
	levelsGroup   = 2
	levelsBracket = 4 // A_Indirection with A_Indices, A_ArrayExpr
	levelsCase    = 4 // CaseExpr and CaseWhen
	levelsAtomic  = 8 // BEGIN ATOMIC … END: a function body's statement lists
	levelsBoolean = 4 // an OR of ANDs, flattened lists: at most two BoolExprs
)

// nestKind is what a limit's message names as making a statement deep.
type nestKind uint8

const (
	nestOperator nestKind = iota
	nestJoin
	nestSetOperation
	nestQuery
	nestCase
	nestGroup
	nestKinds
)

var nestNames = [nestKinds][2]string{
	{"operator", "operators"},
	{"join", "joins"},
	{"UNION, INTERSECT or EXCEPT branch", "UNION, INTERSECT or EXCEPT branches"},
	{"nested query", "nested queries"},
	{"nested CASE expression", "nested CASE expressions"},
	{"nested call, parenthesis or bracket", "nested calls, parentheses or brackets"},
}

// depthPath is one path down a statement's tree: its levels and how many
// of each kind of construct it crosses.
type depthPath struct {
	levels int
	n      [nestKinds]int32
}

func (p *depthPath) add(k nestKind, levels int) {
	p.levels += levels
	p.n[k]++
}

func (p depthPath) plus(q depthPath) depthPath {
	p.levels += q.levels
	for i := range p.n {
		p.n[i] += q.n[i]
	}
	return p
}

func deeper(p, q depthPath) depthPath {
	if q.levels > p.levels {
		return q
	}
	return p
}

// what names the construct the path crosses most often: "4,800 operators".
func (p depthPath) what() string {
	best := nestKind(0)
	for k := range p.n {
		if p.n[k] > p.n[best] {
			best = nestKind(k)
		}
	}
	n := p.n[best]
	if n == 0 {
		return ""
	}
	name := nestNames[best][1]
	if n == 1 {
		name = nestNames[best][0]
	}
	return thousands(int(n)) + " " + name
}

// scanFrame is one group of the text: the statement itself, parentheses,
// brackets, CASE … END or BEGIN ATOMIC … END.
type scanFrame struct {
	kind    byte // 0 the statement, '(', '[', 'c' CASE, 'a' BEGIN ATOMIC
	call    bool // '(' right after a name: a call's arguments
	query   bool // the group starts with SELECT, VALUES, TABLE, WITH, INSERT …: a subquery
	started bool // a token was seen inside

	chain      depthPath // set operations and INSERT/UPDATE/DELETE/MERGE: above every branch
	branch     depthPath // the current set-operation branch's SELECT and joins
	boolean    bool      // the branch has AND or OR
	seg        depthPath // the operators of the current expression segment
	sub        depthPath // the deepest group closed inside the segment
	best       depthPath // the deepest closed segment of the branch
	bestBranch depthPath
	between    int // BETWEENs waiting for their AND
}

func (f *scanFrame) endSegment() {
	f.best = deeper(f.best, f.seg.plus(f.sub))
	f.seg, f.sub = depthPath{}, depthPath{}
}

func (f *scanFrame) endBranch() {
	f.endSegment()
	b := f.branch.plus(f.best)
	if f.boolean {
		b.levels += levelsBoolean
	}
	f.bestBranch = deeper(f.bestBranch, b)
	f.branch, f.best, f.boolean, f.between = depthPath{}, depthPath{}, false, 0
}

// close returns the bound on the levels the group produces.
func (f *scanFrame) close() depthPath {
	f.endBranch()
	v := f.chain.plus(f.bestBranch)
	switch {
	case f.kind == 0:
		v.levels += levelsStatement
	case f.kind == '(' && f.query:
		v.levels += levelsGroup // the query's SELECT counts itself
	case f.kind == '(' && f.call:
		v.add(nestGroup, levelsCall)
	case f.kind == '(':
		v.add(nestGroup, levelsGroup)
	case f.kind == '[':
		v.add(nestGroup, levelsBracket)
	case f.kind == 'c':
		v.add(nestCase, levelsCase)
	case f.kind == 'a':
		v.add(nestQuery, levelsAtomic)
	}
	return v
}

// checkComplexity refuses sql when it is longer than maxBytes, nests
// parentheses, brackets and CASE expressions deeper than maxNesting, or
// could make a tree deeper than lim allows the parser. It scans like
// PostgreSQL's lexer: comments, quoted identifiers, strings (E'…' too)
// and dollar quotes hide what they contain.
func checkComplexity(sql string, maxBytes, maxNesting int, lim NestingLimits) *Error {
	if len(sql) > maxBytes {
		return errorf(sqlstate.ProgramLimitExceeded, "statement is %d bytes, more than the %d allowed (listen.max-statement-bytes)", len(sql), maxBytes)
	}
	total, err := estimateDepth(sql, maxNesting, lim.TextLevels)
	if err != nil {
		return err
	}
	if total.levels > lim.TextLevels {
		what := "its text"
		if w := total.what(); w != "" {
			what = w + " on one path"
		}
		return errorf(sqlstate.StatementTooComplex, "statement is nested too deeply to analyse safely: %s could make its parse tree %s levels deep; %s",
			what, thousands(total.levels), lim.Allowed())
	}
	return nil
}

// estimateDepth returns an upper bound on the levels of sql's parse tree,
// or an error when groups nest deeper than maxNesting. It stops counting
// once the bound exceeds stopAt.
func estimateDepth(sql string, maxNesting, stopAt int) (depthPath, *Error) {
	// Every group adds at least levelsGroup, so once the open ones alone
	// exceed stopAt the rest of the text cannot bring the bound under it.
	maxOpen := stopAt/levelsGroup + 1
	frames := make([]scanFrame, 1, 16)
	var statements depthPath // the deepest statement closed by ';'
	parens, brackets := 0, 0 // open '(' and '[' frames
	prevWord := false        // the last token was a name, a literal or a closing bracket
	prevKeyword := ""        // the last token, when it was a keyword the scan knows
	pop := func() {
		f := &frames[len(frames)-1]
		switch f.kind {
		case '(':
			parens--
		case '[':
			brackets--
		}
		v := f.close()
		frames = frames[:len(frames)-1]
		parent := &frames[len(frames)-1]
		parent.sub = deeper(parent.sub, v)
	}
	push := func(kind byte) *Error {
		frames[len(frames)-1].started = true
		frames = append(frames, scanFrame{kind: kind, call: kind == '(' && prevWord})
		switch kind {
		case '(':
			parens++
		case '[':
			brackets++
		}
		if len(frames)-1 > maxNesting {
			return errorf(sqlstate.StatementTooComplex, "statement nests parentheses, brackets or CASE expressions more than %s deep (listen.max-nesting-depth)", thousands(maxNesting))
		}
		return nil
	}
	n := len(sql)
	for i := 0; i < n && len(frames) <= maxOpen; {
		c := sql[i]
		in := len(frames) - 1 // the group the token stands in
		top := &frames[in]
		word := false
		keyword := ""
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
			continue // whitespace keeps what came before
		case c == '-' && i+1 < n && sql[i+1] == '-':
			for i < n && sql[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < n && sql[i+1] == '*':
			i = skipComment(sql, i)
			continue
		case c == '\'':
			i, word = skipQuoted(sql, i, '\'', false), true
		case (c == 'E' || c == 'e') && i+1 < n && sql[i+1] == '\'':
			i, word = skipQuoted(sql, i+1, '\'', true), true
		case c == '"':
			i, word = skipQuoted(sql, i, '"', false), true
		case c == '$' && dollarTag(sql, i) > 0:
			tag := sql[i : i+dollarTag(sql, i)]
			j := i + len(tag)
			for j < n && !(sql[j] == '$' && len(sql)-j >= len(tag) && sql[j:j+len(tag)] == tag) {
				j++
			}
			i, word = j+len(tag), true
		case c == '(' || c == '[':
			if err := push(c); err != nil {
				return depthPath{}, err
			}
			i++
		case c == ')' || c == ']':
			// Closes the innermost open group of its kind, and any CASE
			// left open inside it (a syntax error the parser reports).
			open, kind := parens, byte('(')
			if c == ']' {
				open, kind = brackets, '['
			}
			if open > 0 {
				for frames[len(frames)-1].kind != kind {
					pop()
				}
				pop()
			}
			i, word = i+1, true
		case c == ',':
			top.endSegment()
			i++
		case c == ';':
			if len(frames) == 1 {
				statements = deeper(statements, top.close())
				frames[0] = scanFrame{}
			} else {
				top.endBranch()
			}
			i++
		case c == ':' && i+1 < n && sql[i+1] == ':':
			top.seg.add(nestOperator, levelsOperator)
			i += 2
		case c == ':' || isOpChar(c):
			// PostgreSQL lexes "+-" as two operators and a run of them as
			// nested unary operators: each character may be a level. A
			// single ':' separates a JSON key from its value.
			top.seg.add(nestOperator, levelsOperator)
			i++
		case isIdentStart(c):
			j := i
			for j < n && isIdentPart(sql[j]) {
				j++
			}
			keyword = upperASCII(sql[i:j])
			i, word = j, true
			switch keyword {
			case "SELECT", "VALUES", "TABLE":
				if !top.started {
					top.query = true
				}
				top.branch.add(nestQuery, levelsQuery)
			case "WITH":
				if !top.started {
					top.query = true
				}
				top.branch.levels += levelsWith
			case "INSERT", "UPDATE", "DELETE", "MERGE":
				if !top.started {
					top.query = true
				}
				top.chain.add(nestQuery, levelsQuery)
			case "JOIN":
				top.branch.add(nestJoin, levelsJoin)
			case "UNION", "INTERSECT", "EXCEPT":
				top.endBranch()
				top.chain.add(nestSetOperation, levelsSetOperation)
			case "AND":
				if top.between > 0 {
					top.between-- // BETWEEN's own AND: its bounds nest below it
					break
				}
				top.endSegment()
				top.boolean = true
			case "OR":
				top.endSegment()
				top.boolean = true
			case "BETWEEN":
				top.seg.add(nestOperator, levelsWideOperator)
				top.between++
			case "SIMILAR":
				top.seg.add(nestOperator, levelsWideOperator)
			case "NOT", "IS", "ISNULL", "NOTNULL", "LIKE", "ILIKE", "IN", "OVERLAPS", "AT", "COLLATE",
				"ESCAPE", "OVER", "FILTER", "WITHIN", "VALUE":
				top.seg.add(nestOperator, levelsOperator)
			case "OPERATOR":
				// OPERATOR(schema.op) is one operator: count it here, not
				// its name as a call with an operator inside.
				top.seg.add(nestOperator, levelsOperator)
				if k := skipOperatorName(sql, i); k > i {
					i = k
				}
			case "FROM":
				if prevKeyword != "DISTINCT" { // IS [NOT] DISTINCT FROM's right side nests below it
					top.endSegment()
				}
			case "GROUP":
				if prevKeyword != "WITHIN" { // WITHIN GROUP (…) belongs to its call
					top.endSegment()
				}
			case "WHERE", "HAVING", "ORDER", "LIMIT", "OFFSET", "FETCH", "WINDOW", "RETURNING", "ON", "USING",
				"SET", "WHEN", "THEN", "ELSE", "AS", "INTO":
				top.endSegment()
			case "CASE":
				if err := push('c'); err != nil {
					return depthPath{}, err
				}
			case "END":
				if top.kind == 'c' || top.kind == 'a' {
					pop()
				}
			case "ATOMIC":
				if prevKeyword == "BEGIN" {
					if err := push('a'); err != nil {
						return depthPath{}, err
					}
				}
			}
		default:
			// Digits, '.', '$1': parts of a leaf.
			i, word = i+1, true
		}
		if in < len(frames) { // not a group the token closed
			frames[in].started = true
		}
		prevWord, prevKeyword = word, keyword
	}
	for len(frames) > 1 {
		pop()
	}
	return deeper(statements, frames[0].close()), nil
}

// skipOperatorName returns the end of "(schema.op)" after OPERATOR at i,
// or i when what follows is not an operator name.
func skipOperatorName(sql string, i int) int {
	j := i
	for j < len(sql) && (sql[j] == ' ' || sql[j] == '\t' || sql[j] == '\n' || sql[j] == '\r') {
		j++
	}
	if j >= len(sql) || sql[j] != '(' {
		return i
	}
	for j++; j < len(sql); j++ {
		switch c := sql[j]; {
		case c == ')':
			return j + 1
		case c == '.' || c == ' ' || isIdentPart(c) || (isOpChar(c) && !(c == '-' && j+1 < len(sql) && sql[j+1] == '-') && !(c == '/' && j+1 < len(sql) && sql[j+1] == '*')):
		default:
			return i // a quote, a comment, a parenthesis: scan it as it is
		}
	}
	return i
}

func skipComment(s string, i int) int {
	depth := 0
	for i < len(s) {
		switch {
		case i+1 < len(s) && s[i] == '/' && s[i+1] == '*':
			depth++
			i += 2
		case i+1 < len(s) && s[i] == '*' && s[i+1] == '/':
			depth--
			i += 2
			if depth == 0 {
				return i
			}
		default:
			i++
		}
	}
	return i
}

func skipQuoted(s string, i int, q byte, backslash bool) int {
	i++
	for i < len(s) {
		switch {
		case backslash && s[i] == '\\':
			i += 2
		case s[i] == q && i+1 < len(s) && s[i+1] == q:
			i += 2
		case s[i] == q:
			return i + 1
		default:
			i++
		}
	}
	return i
}

// dollarTag returns the length of a dollar-quote opener ($$ or $tag$) at i, or 0.
func dollarTag(s string, i int) int {
	j := i + 1
	if i > 0 && isIdentPart(s[i-1]) {
		return 0 // part of an identifier such as a$b, or a parameter $1
	}
	for j < len(s) && s[j] != '$' {
		if !isIdentPart(s[j]) || (j == i+1 && s[j] >= '0' && s[j] <= '9') {
			return 0
		}
		j++
	}
	if j >= len(s) {
		return 0
	}
	return j - i + 1
}

func isOpChar(c byte) bool {
	switch c {
	case '+', '-', '*', '/', '<', '>', '=', '~', '!', '@', '#', '%', '^', '&', '|', '`', '?':
		return true
	}
	return false
}

func isIdentStart(c byte) bool {
	return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') || c >= 0x80
}

func isIdentPart(c byte) bool {
	return isIdentStart(c) || (c >= '0' && c <= '9') || c == '$'
}

func upperASCII(s string) string {
	if len(s) > 10 {
		return ""
	}
	var b [10]byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' {
			c -= 32
		}
		b[i] = c
	}
	return string(b[:len(s)])
}

// thousands formats n ≥ 0 with comma separators: 10,922.
func thousands(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
