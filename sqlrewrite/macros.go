package sqlrewrite

import (
	"fmt"
	"math"
	"strings"

	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/rangerexpr"
	"github.com/pgranger/pgranger/sqlstate"
)

// Ranger expressions ${{…}} in row filters and CUSTOM masks
// (docs/policy-semantics.md, "`${{…}}` expressions"; in apache/ranger,
// RangerRequestExprResolver, RangerRequestScriptEvaluator and
// MacroProcessor in agents-common)
// are expanded here, before parsing.
//
// The expression language itself (macros, USER / UG / TAGS / REQ / …, the
// ctx function table, the step budget) is package rangerexpr's; this file
// builds its Env from the session's identity, the resource the filter or
// mask is for and that resource's tags, and places each value in the SQL
// text. Anything outside the language, anything that would make a rewrite
// depend on the client or the clock (REQ.clientIPAddress, REQ.accessTime,
// ctx.isAccessedBefore: rewrites are cached per statement and identity),
// a missing attribute and a value that cannot be made safe deny the table.
//
// Ranger pastes the value in as raw text; pgranger substitutes it as data:
// inside a string literal the value is escaped, outside one a string
// becomes a quoted literal, a _Q list a list of quoted literals, a boolean
// true or false and a number a numeric literal, so an attribute value such
// as  x' OR '1'='1  stays a string. A macro in a place where it cannot be
// made safe (a quoted identifier, a comment, a dollar-quoted string) makes
// the expression unusable, and the caller denies the table.

// exprScope says what an expression is evaluated for: the Ranger resource
// (the table for a row filter, the column for a mask) and the tag of the
// tag policy it comes from (nil for a resource policy).
type exprScope struct {
	res policy.Resource
	tag *policy.Tag
}

// exprEnv builds the expression context of the session's subject for sc.
func (r *stmtRewriter) exprEnv(sc exprScope) *rangerexpr.Env {
	subj := r.sess.Subject
	env := &rangerexpr.Env{
		User:       subj.User,
		Attrs:      map[string]string{},
		Groups:     sortedUnique(subj.Groups),
		GroupAttrs: map[string]map[string]string{},
		Roles:      sortedUnique(r.roles()),
		Resource:   map[string]string{},
		Tag:        exprTag(sc.tag),
	}
	var ga map[string]map[string]string
	if eng := r.env.Policy.Engine; eng != nil {
		for k, v := range eng.UserAttributes(subj) {
			env.Attrs[k] = v
		}
		ga = eng.GroupAttributes(subj)
		if sc.res.Table != "" {
			for _, t := range eng.Evaluate(&policy.Request{Subject: subj, Hive: sc.res, At: r.env.Now, Want: policy.WantTags}).Tags {
				env.Tags = append(env.Tags, *exprTag(&t))
			}
		}
	} else {
		for k, v := range subj.Attributes {
			env.Attrs[k] = v
		}
	}
	env.Attrs["_name"] = subj.User
	for _, g := range env.Groups {
		attrs := map[string]string{}
		for k, v := range ga[g] {
			attrs[k] = v
		}
		attrs["_name"] = g
		env.GroupAttrs[g] = attrs
	}
	setExprResource(env, sc.res)
	return env
}

// exprTag is a policy tag as the expression language sees it.
func exprTag(t *policy.Tag) *rangerexpr.Tag {
	if t == nil {
		return nil
	}
	return &rangerexpr.Tag{Type: t.Type, Attributes: t.Attributes, MatchType: t.MatchType}
}

// setExprResource fills RES from a Ranger resource.
func setExprResource(env *rangerexpr.Env, res policy.Resource) {
	env.Resource = map[string]string{}
	parts := []string{}
	for _, kv := range [][2]string{{"database", res.Database}, {"table", res.Table}, {"column", res.Column}} {
		if kv[1] != "" {
			env.Resource[kv[0]] = kv[1]
			parts = append(parts, kv[1])
		}
	}
	if res.Owner != "" {
		env.Resource["_ownerUser"] = res.Owner
	}
	switch {
	case res.Column != "":
		env.What = "column " + strings.Join(parts, ".")
	case len(parts) > 0:
		env.What = "table " + strings.Join(parts, ".")
	}
}

// lexical states of the expression text around a macro.
const (
	lexCode = iota
	lexString
	lexEString
	lexOther // quoted identifier, comment, dollar quote: no safe substitution
)

func (r *stmtRewriter) expandMacros(text string, sc exprScope) (string, *Error) {
	if !strings.Contains(text, "${{") {
		return text, nil
	}
	return expandExprs(text, r.exprEnv(sc))
}

// expandExprs substitutes every ${{…}} of text, tracking whether it stands
// inside a string literal.
func expandExprs(text string, env *rangerexpr.Env) (string, *Error) {
	var b strings.Builder
	state := lexCode
	blockDepth := 0
	dollarTagText := ""
	for i := 0; i < len(text); {
		if strings.HasPrefix(text[i:], "${{") && state != lexOther {
			end := strings.Index(text[i+3:], "}}")
			if end < 0 {
				return "", errorf(sqlstate.SyntaxError, "unterminated ${{ in expression")
			}
			src := text[i+3 : i+3+end]
			v, err := rangerexpr.Eval(src, env)
			if err != nil {
				return "", errorf(sqlstate.InsufficientPrivilege, "Ranger expression ${{%s}} cannot be used for user %q: %v", strings.TrimSpace(src), env.User, err)
			}
			s, err := render(v, state)
			if err != nil {
				return "", errorf(sqlstate.InsufficientPrivilege, "Ranger expression ${{%s}} cannot be used for user %q: %v", strings.TrimSpace(src), env.User, err)
			}
			next := i + 3 + end + 2
			if state == lexCode && s != "" {
				// A value must stay one token: never glued to a neighbour
				// (E'…' escapes, U&'…', two literals merging into one,
				// digits into an identifier).
				if cur := b.String(); cur != "" && !separates(cur[len(cur)-1]) {
					b.WriteByte(' ')
				}
				b.WriteString(s)
				if next < len(text) && !separates(text[next]) {
					b.WriteByte(' ')
				}
			} else {
				b.WriteString(s)
			}
			i = next
			continue
		}
		if strings.HasPrefix(text[i:], "${{") {
			return "", errorf(sqlstate.InsufficientPrivilege, "a ${{…}} expression inside a quoted identifier, comment or dollar-quoted string cannot be substituted safely")
		}
		c := text[i]
		b.WriteByte(c)
		switch state {
		case lexCode:
			switch {
			case c == '\'' && i > 0 && (text[i-1] == 'E' || text[i-1] == 'e') && (i < 2 || !isIdentPart(text[i-2])):
				state = lexEString
			case c == '\'':
				state = lexString
			case c == '"':
				state, dollarTagText = lexOther, `"`
			case c == '-' && i+1 < len(text) && text[i+1] == '-':
				state, dollarTagText = lexOther, "\n"
			case c == '/' && i+1 < len(text) && text[i+1] == '*':
				state, dollarTagText, blockDepth = lexOther, "*/", 1
				b.WriteByte('*')
				i++
			case c == '$' && dollarTag(text, i) > 0:
				tag := text[i : i+dollarTag(text, i)]
				b.WriteString(tag[1:])
				i += len(tag) - 1
				state, dollarTagText = lexOther, tag
			}
		case lexString, lexEString:
			switch {
			case state == lexEString && c == '\\' && i+1 < len(text):
				b.WriteByte(text[i+1])
				i++
			case c == '\'' && i+1 < len(text) && text[i+1] == '\'':
				b.WriteByte('\'')
				i++
			case c == '\'':
				state = lexCode
			}
		case lexOther:
			if dollarTagText == "*/" && c == '/' && i+1 < len(text) && text[i+1] == '*' {
				blockDepth++
				b.WriteByte('*')
				i++
			} else if strings.HasPrefix(text[i:], dollarTagText) {
				b.WriteString(dollarTagText[1:])
				i += len(dollarTagText) - 1
				if dollarTagText != "*/" {
					state = lexCode
				} else if blockDepth--; blockDepth == 0 {
					state = lexCode
				}
			}
		}
		i++
	}
	return b.String(), nil
}

// separates reports whether c can stand right next to a substituted value
// without changing how either is read.
func separates(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\f', '(', ')', ',', '=', '<', '>', '[', ']', '+', '-', '*', '/', '%', '|', '^', '~', '!', ';':
		return true
	}
	return false
}

// render turns the expression's value into SQL text for where it stands.
func render(v rangerexpr.Value, state int) (string, error) {
	inString := state == lexString || state == lexEString
	escape := func(s string) string {
		if state == lexEString {
			return strings.NewReplacer(`\`, `\\`, "'", "''").Replace(s)
		}
		return strings.ReplaceAll(s, "'", "''")
	}
	switch v.Kind() {
	case rangerexpr.Undefined:
		return "", v.ErrUndefined()
	case rangerexpr.Null:
		return "", fmt.Errorf("the value is null")
	case rangerexpr.Object, rangerexpr.Context:
		return "", fmt.Errorf("the value is an object, not text")
	case rangerexpr.Bool, rangerexpr.Number:
		if v.Kind() == rangerexpr.Number && (math.IsNaN(v.Num()) || math.IsInf(v.Num(), 0)) {
			return "", fmt.Errorf("the value is not a finite number")
		}
		s, _ := v.Text()
		if inString {
			return escape(s), nil
		}
		if v.Kind() == rangerexpr.Number && v.Num() < 0 {
			return "(" + s + ")", nil // never "--": a comment
		}
		return s, nil
	case rangerexpr.Array:
		if inString {
			return escape(strings.Join(v.Items(), ",")), nil
		}
		return "", fmt.Errorf("a list can only be used inside a string literal; use its _Q form (GET_UG_NAMES_Q(), UG_NAMES_Q_CSV, …)")
	}
	// a string
	text, _ := v.Text()
	l, isList := v.List()
	items, sep, quoted := l.Items, l.Sep, l.Quoted
	if isList && (l.Open != "" || l.Close != "") {
		return "", fmt.Errorf("quotes %q…%q cannot be made safe in SQL; only ' is", l.Open, l.Close)
	}
	if !isList {
		if inString {
			return escape(text), nil
		}
		return QuoteLiteral(text), nil
	}
	if inString {
		if quoted {
			return "", fmt.Errorf("a quoted list cannot be used inside a string literal")
		}
		return escape(text), nil
	}
	if !quoted {
		return "", fmt.Errorf("an unquoted list can only be used inside a string literal; use its _Q form (GET_UG_NAMES_Q(), UG_NAMES_Q_CSV, …)")
	}
	if len(items) == 0 {
		return "NULL", nil // x IN (NULL) matches nothing
	}
	if len(items) > 1 && strings.TrimSpace(sep) != "," {
		return "", fmt.Errorf("a quoted list needs ',' as its separator, not %q", sep)
	}
	parts := make([]string, len(items))
	for i, s := range items {
		parts[i] = QuoteLiteral(s)
	}
	return strings.Join(parts, sep), nil
}
