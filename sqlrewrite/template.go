package sqlrewrite

import (
	"context"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/sqlstate"
)

// Clients of the simple protocol (psql, pgbench -M simple, many ORMs)
// send the same statement shape with different constants every time:
// "… WHERE id = 42", "… WHERE id = 43". Keyed by the exact text, every
// one would be a cache miss and a full parse, analysis and deparse. A
// statement's rewrite does not depend on its constants, so the rewriter
// also caches by a template: the text with its plain numeric and string
// literals replaced by $1, $2, … The template is rewritten once (as if the
// constants were parameters); each statement of that shape then costs a
// scan and a join of the cached pieces with its own constants, byte for
// byte as the client wrote them.
//
// Where the analysis does depend on a constant (set_config's setting name,
// is_role_in_session's role, TABLESAMPLE arguments) or a constant cannot
// be a parameter (DATE '…', INTERVAL '…', a SET value), the template fails
// to parse or is denied, and the statement takes the exact path: a
// template is only ever used when its rewrite succeeded, so it can never
// allow what the exact text would not.

// template is a rewritten template cut at its placeholders: the
// statement's SQL is pieces[0] + lit[order[0]] + pieces[1] + … .
type template struct {
	res    *Result // the template's rewrite; SQL is replaced per statement
	pieces []string
	order  []int // literal index for each gap between pieces
	usable bool
}

// literalTemplate returns sql with its literals replaced by placeholders,
// and the literals' text; ok is false when the text has no literals or
// holds anything this scanner does not read exactly as PostgreSQL's lexer
// does (standard_conforming_strings is on: pgranger refuses to change it).
//
// The scanner is deliberately narrow, because a region it took for a
// literal that PostgreSQL reads as code would be analysed as a parameter
// but sent as code. It gives up on a backslash or a '$' anywhere (E'…'
// escapes, dollar quotes, parameters, identifiers with $), on a string
// with a prefix (E'…', B'…', X'…', N'…', U&'…'), on a string followed by
// another (a continuation, one literal for PostgreSQL), on an unterminated
// string, identifier or comment, and on numbers with more than one dot,
// underscores or trailing identifier characters. Every other byte outside
// a literal is kept as it is, so PostgreSQL lexes the template like the
// statement; newTemplate then checks each placeholder came back as a
// parameter exactly once.
func literalTemplate(sql string) (tmpl string, lits []string, ok bool) {
	if strings.IndexByte(sql, '\\') >= 0 || strings.IndexByte(sql, '$') >= 0 {
		return "", nil, false
	}
	var b strings.Builder
	n := len(sql)
	last := 0
	emit := func(start, end int) {
		b.WriteString(sql[last:start])
		lits = append(lits, sql[start:end])
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(len(lits)))
		last = end
	}
	for i := 0; i < n; {
		c := sql[i]
		switch {
		case c == '-' && i+1 < n && sql[i+1] == '-':
			for i < n && sql[i] != '\n' && sql[i] != '\r' {
				i++
			}
		case c == '/' && i+1 < n && sql[i+1] == '*':
			depth := 0
			for depth >= 0 {
				switch {
				case i >= n:
					return "", nil, false // unterminated comment
				case i+1 < n && sql[i] == '/' && sql[i+1] == '*':
					depth++
					i += 2
				case i+1 < n && sql[i] == '*' && sql[i+1] == '/':
					depth--
					i += 2
					if depth == 0 {
						depth = -1
					}
				default:
					i++
				}
			}
		case c == '"':
			end, closed := skipQuote(sql, i, '"')
			if !closed {
				return "", nil, false
			}
			i = end
		case c == '\'':
			if i > 0 && (isIdentPart(sql[i-1]) || sql[i-1] == '&') {
				return "", nil, false // E'', B'', X'', N'', U&'', or a typed literal
			}
			end, closed := skipQuote(sql, i, '\'')
			if !closed {
				return "", nil, false
			}
			j := end
			for j < n && (sql[j] == ' ' || sql[j] == '\t' || sql[j] == '\n' || sql[j] == '\r' || sql[j] == '\f') {
				j++
			}
			if j < n && sql[j] == '\'' {
				return "", nil, false // 'a' 'b' across a newline is one literal
			}
			emit(i, end)
			i = end
		case c >= '0' && c <= '9' || c == '.' && i+1 < n && sql[i+1] >= '0' && sql[i+1] <= '9':
			if i > 0 && (isIdentPart(sql[i-1]) || sql[i-1] == '.') {
				// Part of a name (t1, x.5): kept as it is.
				i++
				continue
			}
			j, dots := i, 0
			for j < n && (sql[j] >= '0' && sql[j] <= '9' || sql[j] == '.') {
				if sql[j] == '.' {
					dots++
				}
				j++
			}
			if j < n && (sql[j] == 'e' || sql[j] == 'E') {
				k := j + 1
				if k < n && (sql[k] == '+' || sql[k] == '-') {
					k++
				}
				if k < n && sql[k] >= '0' && sql[k] <= '9' {
					for j = k; j < n && sql[j] >= '0' && sql[j] <= '9'; j++ {
					}
				}
			}
			if dots > 1 || j < n && (isIdentPart(sql[j]) || sql[j] == '.') {
				return "", nil, false // 1.2.3, 1_000, 0x1F, 1e, 12abc
			}
			emit(i, j)
			i = j
		case isIdentStart(c):
			for i < n && isIdentPart(sql[i]) {
				i++
			}
		default:
			i++
		}
	}
	if len(lits) == 0 {
		return "", nil, false
	}
	b.WriteString(sql[last:])
	return b.String(), lits, true
}

// literalTypes are the types PostgreSQL gives the literals: an untyped
// string is left unspecified (0), a number is integer, bigint or numeric
// as it fits.
func literalTypes(lits []string) []uint32 {
	types := make([]uint32, len(lits))
	for i, l := range lits {
		switch {
		case strings.HasPrefix(l, "'"):
		case strings.ContainsAny(l, ".eE"):
			types[i] = catalog.OIDNumeric
		default:
			if _, err := strconv.ParseInt(l, 10, 32); err == nil {
				types[i] = catalog.OIDInt4
			} else if _, err := strconv.ParseInt(l, 10, 64); err == nil {
				types[i] = catalog.OIDInt8
			} else {
				types[i] = catalog.OIDNumeric
			}
		}
	}
	return types
}

// skipQuote returns the index after the quoted text starting at i (a
// doubled quote stands for itself) and whether it was closed.
func skipQuote(s string, i int, q byte) (int, bool) {
	for i++; i < len(s); i++ {
		if s[i] == q {
			if i+1 < len(s) && s[i+1] == q {
				i++
				continue
			}
			return i + 1, true
		}
	}
	return i, false
}

// newTemplate cuts a template's rewrite at its placeholders. It is usable
// only when the rewrite succeeded and every placeholder appears exactly
// once, outside literals (pg_query's scanner decides).
func newTemplate(res *Result, nlits int) *template {
	t := &template{res: res}
	if res.Err != nil {
		return t
	}
	if !res.Changed {
		t.usable = true // the statement goes out as the client wrote it
		return t
	}
	scan, err := pg.Scan(res.SQL)
	if err != nil {
		return t
	}
	seen := make([]bool, nlits)
	last := 0
	for _, tok := range scan.Tokens {
		if tok.Token != pg.Token_PARAM {
			continue
		}
		k, err := strconv.Atoi(res.SQL[tok.Start+1 : tok.End])
		if err != nil || k < 1 || k > nlits || seen[k-1] {
			return t
		}
		// A parameter takes indirection ($1.f, $1[1]) where a literal
		// needs parentheses the deparser dropped: (0).f rendered as $1.f
		// would come out as 0.f, which means something else.
		if rest := strings.TrimLeft(res.SQL[tok.End:], " \t\n"); strings.HasPrefix(rest, ".") || strings.HasPrefix(rest, "[") {
			return t
		}
		seen[k-1] = true
		t.pieces = append(t.pieces, res.SQL[last:tok.Start])
		t.order = append(t.order, k-1)
		last = int(tok.End)
	}
	for _, s := range seen {
		if !s {
			return t
		}
	}
	t.pieces = append(t.pieces, res.SQL[last:])
	t.usable = true
	return t
}

// instantiate makes the Result for one statement of the template's shape.
func (t *template) instantiate(sql string, lits []string) *Result {
	r := *t.res
	r.fromTemplate = true
	if !r.Changed {
		r.SQL = sql
		return &r
	}
	var b strings.Builder
	b.Grow(len(r.SQL) + len(sql))
	for i, p := range t.pieces {
		b.WriteString(p)
		if i < len(t.order) {
			b.WriteString(lits[t.order[i]])
		}
	}
	r.SQL = b.String()
	return &r
}

// rewriteTemplated answers sql from the rewrite of its literal template,
// rewriting the template once per key. ok is false when the statement
// must take the exact path: it has no literals (or has parameters), the
// template was denied or does not parse, its analysis depended on a
// constant, or its rewrite cannot be cut at the placeholders. The exact
// path then decides (and caches by the exact text), so a template never
// allows what the statement itself would not.
func (rw *Rewriter) rewriteTemplated(ctx context.Context, env *Env, sess *Session, sql string, key cacheKey) (*Result, *catalog.Snapshot, bool) {
	snap := env.Catalog
	if len(sql) > rw.opts.MaxStatementBytes {
		return nil, snap, false // the exact path reports it
	}
	tmpl, lits, ok := literalTemplate(sql)
	if !ok {
		return nil, snap, false
	}
	// The placeholders stand for literals of a type (integer, bigint,
	// numeric, untyped string), which decides how the backend resolves an
	// operator on them and so the barrier (barrier.go): the template is
	// analysed with those types and keyed by them.
	types := literalTypes(lits)
	key.sql, key.template, key.paramTypes = tmpl, true, paramTypesKey(types)
	t, ok := rw.templates.GetIfPresent(key)
	if !ok {
		tenv := *env
		tenv.ParamTypes, tenv.literalParams = types, true
		var res *Result
		res, snap = rw.rewriteText(ctx, &tenv, sess, tmpl, false) // after a forced reload, the exact path goes on from snap
		t = newTemplate(res, len(lits))
		if res.volatile || res.constDependent {
			t.usable = false
		}
		if t.usable {
			// The fingerprint ignores constants; the template's own would
			// count $n as a different shape from the client's literal.
			if fp := fingerprint(sql); fp != "" {
				r := *t.res
				r.Fingerprint, r.Audit.Fingerprint = fp, fp
				t.res = &r
			}
		}
		// Not cached: a denial for a name the catalog does not know yet
		// (a table created a moment later must be found) and anything
		// depending on the session's prepared statements.
		if !res.volatile && (res.Err == nil || res.Err.Code != sqlstate.UndefinedTable) {
			key.catalogVersion = snap.Version
			rw.templates.Set(key, t)
		}
	}
	if !t.usable {
		return nil, snap, false
	}
	return t.instantiate(sql, lits), snap, true
}
