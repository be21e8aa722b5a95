package sqlrewrite

// PostgreSQL's parser, as linked through pg_query, recurses once per link of
// a left-recursive chain (a+b+c…, x::t::t…, a IS NULL IS NULL…) when it
// serialises the tree, and a chain of ~25,000 links overflows the C stack and
// kills the process; no recover() can catch that. checkComplexity bounds such
// chains with a token scan before anything reaches the parser. Other deep
// shapes (nested parentheses, subqueries, NOT NOT …) grow bison's own stack,
// which fails cleanly with "memory exhausted".

// maxChain is the longest operator chain let through. The tree serialiser
// gives up cleanly at about 5,000 links, so nothing longer parses anyway.
const maxChain = 5000

// checkComplexity scans sql like PostgreSQL's lexer (comments, quoted
// identifiers, standard and E” strings, dollar quotes) and returns an error
// when the text is longer than maxBytes, nests parentheses deeper than
// maxDepth, or holds an operator chain longer than maxChain.
func checkComplexity(sql string, maxBytes, maxDepth int) *Error {
	if len(sql) > maxBytes {
		return errorf(CodeProgramLimitExceeded, "statement is %d bytes, more than the %d allowed (listen.max-statement-bytes)", len(sql), maxBytes)
	}
	// chain[d] counts operator links at parenthesis depth d since the last
	// token that starts a new operand list (comma, AND, THEN, …).
	chain := make([]int, 1, 16)
	tooComplex := func() *Error {
		return errorf(CodeStatementTooComplex, "statement is too complex to analyse (more than %d chained operators or %d nested parentheses)", maxChain, maxDepth)
	}
	bump := func() *Error {
		d := len(chain) - 1
		chain[d]++
		if chain[d] > maxChain {
			return tooComplex()
		}
		return nil
	}
	n := len(sql)
	for i := 0; i < n; {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '-' && i+1 < n && sql[i+1] == '-':
			for i < n && sql[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < n && sql[i+1] == '*':
			depth := 0
			for i < n {
				if i+1 < n && sql[i] == '/' && sql[i+1] == '*' {
					depth++
					i += 2
				} else if i+1 < n && sql[i] == '*' && sql[i+1] == '/' {
					depth--
					i += 2
					if depth == 0 {
						break
					}
				} else {
					i++
				}
			}
		case c == '\'':
			i = skipQuoted(sql, i, '\'', false)
		case (c == 'E' || c == 'e') && i+1 < n && sql[i+1] == '\'':
			i = skipQuoted(sql, i+1, '\'', true)
		case c == '"':
			i = skipQuoted(sql, i, '"', false)
		case c == '$' && dollarTag(sql, i) > 0:
			tag := sql[i : i+dollarTag(sql, i)]
			j := i + len(tag)
			for j < n && !(sql[j] == '$' && len(sql)-j >= len(tag) && sql[j:j+len(tag)] == tag) {
				j++
			}
			i = j + len(tag)
		case c == '(' || c == '[':
			chain = append(chain, 0)
			if len(chain)-1 > maxDepth {
				return tooComplex()
			}
			i++
		case c == ')' || c == ']':
			if len(chain) > 1 {
				chain = chain[:len(chain)-1]
			}
			i++
		case c == ',' || c == ';':
			chain[len(chain)-1] = 0
			i++
		case c == ':' && i+1 < n && sql[i+1] == ':':
			if err := bump(); err != nil {
				return err
			}
			i += 2
		case isOpChar(c):
			for i < n && isOpChar(sql[i]) {
				i++
			}
			if err := bump(); err != nil {
				return err
			}
		case isIdentStart(c):
			j := i
			for j < n && isIdentPart(sql[j]) {
				j++
			}
			switch upperASCII(sql[i:j]) {
			case "AND", "OR", "WHEN", "THEN", "ELSE", "END", "SELECT", "FROM", "WHERE", "GROUP", "HAVING",
				"ORDER", "LIMIT", "OFFSET", "VALUES", "ON", "USING", "JOIN", "UNION", "INTERSECT", "EXCEPT", "SET", "RETURNING", "AS":
				chain[len(chain)-1] = 0
			case "IS", "ISNULL", "NOTNULL", "COLLATE", "AT", "LIKE", "ILIKE", "SIMILAR", "BETWEEN", "IN", "NOT", "OVERLAPS":
				if err := bump(); err != nil {
					return err
				}
			}
			i = j
		default:
			i++
		}
	}
	return nil
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
