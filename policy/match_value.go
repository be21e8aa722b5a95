package policy

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// valueKind mirrors the matcher classes Ranger picks for one policy value
// (RangerAbstractResourceMatcher.getMatcher and the path/URL variants). The
// kind is chosen from the raw value, before {USER}-style tokens are
// expanded, exactly as Ranger does.
type valueKind int

const (
	vkLiteral           valueKind = iota // "sales"
	vkPrefix                             // "sales*"
	vkSuffix                             // "*_tmp"
	vkWildcard                           // "s?les", "a*b*c"
	vkRecursivePath                      // path/url value with isRecursive
	vkRecursiveWildPath                  // path value with isRecursive and wildcards
	vkRecursiveWildURL                   // url value with isRecursive and wildcards
)

type valueMatcher struct {
	kind      valueKind
	pat       string // the part compared: whole value, or the fixed part of a prefix/suffix
	foldedPat string // pat folded, when it is static and the match ignores case
	fold      bool
	dynamic   bool // contains {TOKEN}s or ${{expressions}} to expand per request
	exprs     bool
	opts      *matchOpts
}

// tokenCtx supplies per-request values for {USER}, {OWNER} and ${{USER.x}}.
type tokenCtx struct {
	user      string
	owner     string
	userAttrs func() map[string]string
}

var reqExprPattern = regexp.MustCompile(`\$\{\{(.*?)\}\}`)

func newValueMatcher(value string, opts *matchOpts, recursive bool) *valueMatcher {
	vm := &valueMatcher{fold: opts.ignoreCase, opts: opts}
	if opts.replaceExpr && reqExprPattern.MatchString(value) {
		vm.exprs = true
		vm.dynamic = true
	}
	if opts.replaceTokens && hasToken(value, opts) {
		vm.dynamic = true
	}

	if recursive && opts.kind != matcherDefault {
		// Path and URL matchers with isRecursive (RangerPathResourceMatcher,
		// RangerURLResourceMatcher): "/a/b/" means "/a/b/*".
		if opts.wildCard && strings.HasSuffix(value, string(opts.pathSep)) {
			value += "*"
		}
		if opts.wildCard && strings.ContainsAny(value, "*?") {
			vm.kind = vkRecursiveWildPath
			if opts.kind == matcherURL {
				vm.kind = vkRecursiveWildURL
			}
		} else {
			vm.kind = vkRecursivePath
		}
		vm.pat = value
	} else {
		vm.kind, vm.pat = classifyValue(value, opts.wildCard)
	}
	if !vm.dynamic && vm.fold {
		vm.foldedPat = fold(vm.pat)
	}
	return vm
}

// classifyValue follows RangerAbstractResourceMatcher.getMatcher: a '?' or
// non-contiguous '*'s need a full wildcard match; a single run of '*' at
// one end is a prefix or suffix test. A value of only '*'s matches
// everything even where wildcards are off (the hive service-def's mask
// and row-filter resources): Ranger 2.6 and 2.9 both apply a mask policy
// on database "*" to every database, while "sa*" there matches only the
// name "sa*" (measured with the Ranger oracle, internal/interop/diffgen).
func classifyValue(v string, wildCard bool) (valueKind, string) {
	if !wildCard {
		if v != "" && strings.Trim(v, "*") == "" {
			return vkPrefix, ""
		}
		return vkLiteral, v
	}
	start, end := -1, -1
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '?':
			return vkWildcard, v
		case '*':
			if end == -1 || end == i-1 {
				end = i
				if start == -1 {
					start = i
				}
			} else {
				return vkWildcard, v
			}
		}
	}
	switch {
	case start == -1:
		return vkLiteral, v
	case start == 0:
		if end == len(v)-1 {
			return vkPrefix, "" // "*" or "**": matches everything
		}
		return vkSuffix, v[end+1:]
	case end != len(v)-1:
		return vkWildcard, v
	default:
		return vkPrefix, v[:start]
	}
}

// isMatchAny is Ranger's ResourceMatcher.isMatchAny: the value reduced to
// nothing ("*" with wildcards on).
func (vm *valueMatcher) isMatchAny() bool {
	return !vm.dynamic && vm.kind == vkPrefix && vm.pat == ""
}

// isStaticLiteral reports whether the value is a plain name that a lookup
// table can index.
func (vm *valueMatcher) isStaticLiteral() bool {
	return vm.kind == vkLiteral && !vm.dynamic
}

// match tests one request value. unknown is true when the value holds an
// expression pgranger cannot evaluate; the caller then fails closed.
func (vm *valueMatcher) match(value, folded string, tc *tokenCtx) (matched, unknown bool) {
	pat := vm.pat
	if vm.dynamic {
		var ok bool
		pat, ok = vm.expand(tc)
		if !ok {
			return false, true
		}
	}
	s := value
	if vm.fold {
		s = folded
		if vm.dynamic {
			pat = fold(pat)
		} else {
			pat = vm.foldedPat
		}
	}
	sep := string(vm.opts.pathSep)
	switch vm.kind {
	case vkLiteral:
		return s == pat, false
	case vkPrefix:
		return strings.HasPrefix(s, pat), false
	case vkSuffix:
		return strings.HasSuffix(s, pat), false
	case vkWildcard:
		return wildcardMatch(s, pat), false
	case vkRecursivePath:
		base := strings.TrimSuffix(pat, sep)
		return s == base || strings.HasPrefix(s, base+sep), false
	case vkRecursiveWildPath:
		return recursiveWildcardPathMatch(s, pat, vm.opts.pathSep), false
	case vkRecursiveWildURL:
		return recursiveWildcardURLMatch(s, pat, vm.opts.pathSep), false
	}
	return false, false
}

// expand resolves ${{USER...}} expressions, then {TOKEN}s, in that order
// (ResourceMatcher.getExpandedValue). Like Ranger, only the compared part
// is expanded: "{USER}*" tests startsWith(expanded "{USER}"), so a '*' in a
// user name stays literal.
func (vm *valueMatcher) expand(tc *tokenCtx) (string, bool) {
	v := vm.pat
	if vm.exprs {
		ok := true
		v = reqExprPattern.ReplaceAllStringFunc(v, func(m string) string {
			inner := reqExprPattern.FindStringSubmatch(m)[1]
			val, found := resolveUserExpr(inner, tc)
			if !found {
				ok = false
			}
			return val
		})
		if !ok {
			return "", false
		}
	}
	if vm.opts.replaceTokens {
		v = replaceTokens(v, vm.opts, tc)
	}
	return v, true
}

// resolveUserExpr evaluates the one expression form that resource values
// use in practice, USER.<attr> (and USER._name). Anything else is reported
// as not found, which the caller treats as unknown.
func resolveUserExpr(expr string, tc *tokenCtx) (string, bool) {
	expr = strings.TrimSpace(expr)
	var attr string
	switch {
	case strings.HasPrefix(expr, "USER."):
		attr = expr[len("USER."):]
	case strings.HasPrefix(expr, "USER['") && strings.HasSuffix(expr, "']"):
		attr = expr[len("USER['") : len(expr)-2]
	case strings.HasPrefix(expr, `USER["`) && strings.HasSuffix(expr, `"]`):
		attr = expr[len(`USER["`) : len(expr)-2]
	default:
		return "", false
	}
	if attr == "" || strings.ContainsAny(attr, " ()+'\"[]") {
		return "", false
	}
	if attr == "_name" {
		return tc.user, true
	}
	if tc.userAttrs == nil {
		return "", false
	}
	v, ok := tc.userAttrs()[attr]
	return v, ok
}

func hasToken(v string, o *matchOpts) bool {
	return strings.ContainsRune(v, o.tokEscape) || (strings.ContainsRune(v, o.tokStart) && strings.ContainsRune(v, o.tokEnd))
}

// replaceTokens expands {USER} and {OWNER} (Ranger's StringTokenReplacer):
// the escape character protects the next delimiter, unknown tokens and an
// unset owner stay as written.
func replaceTokens(v string, o *matchOpts, tc *tokenCtx) string {
	if !hasToken(v, o) {
		return v
	}
	var out, tok strings.Builder
	inToken := false
	rs := []rune(v)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		if c == o.tokEscape {
			i++
			if i < len(rs) {
				c = rs[i]
				if inToken {
					if c != o.tokEscape && c != o.tokEnd {
						tok.WriteRune(o.tokEscape)
					}
					tok.WriteRune(c)
				} else {
					if c != o.tokEscape && c != o.tokStart {
						out.WriteRune(o.tokEscape)
					}
					out.WriteRune(c)
				}
			} else if inToken {
				tok.WriteRune(o.tokEscape)
			} else {
				out.WriteRune(o.tokEscape)
			}
			continue
		}
		if !inToken {
			if c == o.tokStart {
				inToken = true
				tok.Reset()
			} else {
				out.WriteRune(c)
			}
			continue
		}
		if c != o.tokEnd {
			tok.WriteRune(c)
			continue
		}
		raw := tok.String()
		inToken = false
		replaced, ok := "", false
		if o.tokPrefix == "" || strings.HasPrefix(raw, o.tokPrefix) {
			switch raw[len(o.tokPrefix):] {
			case "USER":
				replaced, ok = tc.user, true
			case "OWNER":
				replaced, ok = tc.owner, tc.owner != ""
			}
		}
		if ok {
			out.WriteString(replaced)
		} else {
			out.WriteRune(o.tokStart)
			out.WriteString(raw)
			out.WriteRune(o.tokEnd)
		}
	}
	if inToken {
		out.WriteRune(o.tokStart)
		out.WriteString(tok.String())
	}
	return out.String()
}

// fold maps a string to a case-insensitive key the way Java's
// equalsIgnoreCase compares characters (upper-case, then lower-case). Index
// keys and matchers use the same function, so they can never disagree.
func fold(s string) string {
	ascii := true
	needs := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		if 'A' <= c && c <= 'Z' {
			needs = true
		}
	}
	if ascii {
		if !needs {
			return s
		}
		b := []byte(s)
		for i, c := range b {
			if 'A' <= c && c <= 'Z' {
				b[i] = c + 'a' - 'A'
			}
		}
		return string(b)
	}
	return strings.Map(func(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }, s)
}

// wildcardMatch is FilenameUtils.wildcardMatch: '*' matches any run of
// characters, '?' exactly one; there is no escape.
func wildcardMatch(s, pat string) bool {
	si, pi := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		if pi < len(pat) {
			pc, pw := utf8.DecodeRuneInString(pat[pi:])
			switch pc {
			case '*':
				starP, starS = pi, si
				pi += pw
				continue
			case '?':
				_, sw := utf8.DecodeRuneInString(s[si:])
				si += sw
				pi += pw
				continue
			default:
				sc, sw := utf8.DecodeRuneInString(s[si:])
				if sc == pc {
					si += sw
					pi += pw
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		_, sw := utf8.DecodeRuneInString(s[starS:])
		starS += sw
		si = starS
		pi = starP + 1
	}
	for pi < len(pat) && pat[pi] == '*' {
		pi++
	}
	return pi == len(pat)
}

func splitNonEmpty(s string, sep rune) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == sep })
}

// recursiveWildcardPathMatch follows RangerPathResourceMatcher's recursive
// wildcard test: the path or any of its ancestors matching the pattern
// grants the whole subtree; leading literal elements short-cut the search.
func recursiveWildcardPathMatch(path, pat string, sep rune) bool {
	if path == "" {
		return false
	}
	elems := splitNonEmpty(path, sep)
	if len(elems) == 0 {
		return wildcardMatch(path, pat)
	}
	wild := splitNonEmpty(pat, sep)
	var sb strings.Builder
	if r, _ := utf8.DecodeRuneInString(path); r == sep {
		sb.WriteRune(sep)
	}
	literal := true
	for i, p := range elems {
		sb.WriteString(p)
		if literal {
			if i < len(wild) {
				if !strings.ContainsAny(wild[i], "*?") {
					if p != wild[i] {
						return false
					}
				} else {
					literal = false
				}
			} else {
				literal = false
			}
		}
		if !literal && wildcardMatch(sb.String(), pat) {
			return true
		}
		sb.WriteRune(sep)
	}
	if literal {
		if len(elems) == len(wild) {
			return true
		}
		if strings.HasSuffix(path, string(sep)) {
			return len(elems) == len(wild)-1 && wild[len(wild)-1] == "*"
		}
	}
	return false
}

var urlSchemePattern = regexp.MustCompile(`:/{2,}`)

// recursiveWildcardURLMatch follows RangerURLResourceMatcher: after the
// scheme ("s3a://"), the URL or any ancestor matching the pattern matches.
func recursiveWildcardURLMatch(url, pat string, sep rune) bool {
	u := strings.TrimSpace(url)
	if u == "" || !urlSchemePattern.MatchString(u) {
		return false
	}
	colon := strings.IndexByte(u, ':')
	end := colon + 1
	for end < len(u) && u[end] == '/' {
		end++
	}
	if end-(colon+1) < 2 {
		return false
	}
	scheme, rest := u[:end], u[end:]
	elems := splitNonEmpty(rest, sep)
	if len(elems) == 0 {
		return wildcardMatch(url, pat)
	}
	var sb strings.Builder
	sb.WriteString(scheme)
	if r, _ := utf8.DecodeRuneInString(url); r == sep {
		sb.WriteRune(sep)
	}
	for _, p := range elems {
		sb.WriteString(p)
		if wildcardMatch(sb.String(), pat) {
			return true
		}
		sb.WriteRune(sep)
	}
	s := sb.String()
	if !strings.HasSuffix(u, string(sep)) {
		s = s[:len(s)-utf8.RuneLen(sep)]
	}
	return wildcardMatch(s, pat)
}
