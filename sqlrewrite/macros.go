package sqlrewrite

import (
	"regexp"
	"strings"
)

// Ranger expressions ${{…}} in row filters and CUSTOM masks (FORMATS §6.6)
// are expanded here, before parsing. Ranger pastes the value in as raw
// text; pgranger substitutes it as data: inside a string literal the value
// is escaped, outside one it becomes a quoted literal (or a list of them),
// so an attribute value such as  x' OR '1'='1  stays a string. An unknown
// macro, a missing attribute or a macro in a place where it cannot be made
// safe (a quoted identifier, a comment, a dollar-quoted string) makes the
// expression unusable, and the caller denies the table.

// macroValue is what one ${{…}} evaluates to.
type macroValue struct {
	items  []string
	list   bool // a list (…_CSV forms): items joined with ","
	quoted bool // a list of quoted literals (…_Q_CSV forms)
}

var (
	reUserAttr   = regexp.MustCompile(`^USER\.([A-Za-z_][A-Za-z0-9_]*)$`)
	reUserAttrIx = regexp.MustCompile(`^USER\[\s*['"]([^'"]+)['"]\s*\]$`)
	reAttrCall   = regexp.MustCompile(`^(GET_USER_ATTR|GET_USER_ATTR_Q|GET_UG_ATTR_CSV|GET_UG_ATTR_Q_CSV)\(\s*['"]([^'"]+)['"]\s*\)$`)
)

func (r *stmtRewriter) evalMacro(expr string) (macroValue, *Error) {
	expr = strings.TrimSpace(expr)
	subj := r.sess.Subject
	attrs := map[string]string{"_name": subj.User}
	if eng := r.env.Policy.Engine; eng != nil {
		for k, v := range eng.UserAttributes(subj) {
			attrs[k] = v
		}
	} else {
		for k, v := range subj.Attributes {
			attrs[k] = v
		}
	}
	userAttr := func(name string) (macroValue, *Error) {
		v, ok := attrs[name]
		if !ok {
			return macroValue{}, errorf(CodeInsufficientPrivilege, "user %q has no attribute %q", subj.User, name)
		}
		return macroValue{items: []string{v}}, nil
	}
	switch expr {
	case "UG_NAMES_CSV", "UGNAMES":
		return macroValue{items: sortedUnique(subj.Groups), list: true}, nil
	case "UG_NAMES_Q_CSV":
		return macroValue{items: sortedUnique(subj.Groups), list: true, quoted: true}, nil
	case "UR_NAMES_CSV", "URNAMES":
		return macroValue{items: r.roles(), list: true}, nil
	case "UR_NAMES_Q_CSV":
		return macroValue{items: r.roles(), list: true, quoted: true}, nil
	}
	if m := reUserAttr.FindStringSubmatch(expr); m != nil {
		return userAttr(m[1])
	}
	if m := reUserAttrIx.FindStringSubmatch(expr); m != nil {
		return userAttr(m[1])
	}
	if m := reAttrCall.FindStringSubmatch(expr); m != nil {
		switch m[1] {
		case "GET_USER_ATTR":
			return userAttr(m[2])
		case "GET_USER_ATTR_Q":
			v, err := userAttr(m[2])
			v.list, v.quoted = true, true
			return v, err
		case "GET_UG_ATTR_CSV", "GET_UG_ATTR_Q_CSV":
			var vals []string
			if eng := r.env.Policy.Engine; eng != nil {
				ga := eng.GroupAttributes(subj)
				for _, g := range sortedUnique(subj.Groups) {
					if v, ok := ga[g][m[2]]; ok {
						vals = append(vals, v)
					}
				}
			}
			return macroValue{items: vals, list: true, quoted: m[1] == "GET_UG_ATTR_Q_CSV"}, nil
		}
	}
	return macroValue{}, errorf(CodeInsufficientPrivilege, "unsupported Ranger expression ${{%s}}", expr)
}

// lexical states of the expression text around a macro.
const (
	lexCode = iota
	lexString
	lexEString
	lexOther // quoted identifier, comment, dollar quote: no safe substitution
)

func (r *stmtRewriter) expandMacros(text string) (string, *Error) {
	if !strings.Contains(text, "${{") {
		return text, nil
	}
	var b strings.Builder
	state := lexCode
	blockDepth := 0
	dollarTagText := ""
	for i := 0; i < len(text); {
		if strings.HasPrefix(text[i:], "${{") && state != lexOther {
			end := strings.Index(text[i+3:], "}}")
			if end < 0 {
				return "", errorf(CodeSyntaxError, "unterminated ${{ in expression")
			}
			v, err := r.evalMacro(text[i+3 : i+3+end])
			if err != nil {
				return "", err
			}
			s, err := v.render(state)
			if err != nil {
				return "", err
			}
			b.WriteString(s)
			i += 3 + end + 2
			continue
		}
		if strings.HasPrefix(text[i:], "${{") {
			return "", errorf(CodeInsufficientPrivilege, "a ${{…}} expression inside a quoted identifier, comment or dollar-quoted string cannot be substituted safely")
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

func (v macroValue) render(state int) (string, *Error) {
	joined := strings.Join(v.items, ",")
	switch state {
	case lexString:
		if v.quoted {
			return "", errorf(CodeInsufficientPrivilege, "a quoted list expression cannot be used inside a string literal")
		}
		return strings.ReplaceAll(joined, "'", "''"), nil
	case lexEString:
		if v.quoted {
			return "", errorf(CodeInsufficientPrivilege, "a quoted list expression cannot be used inside a string literal")
		}
		return strings.NewReplacer(`\`, `\\`, "'", "''").Replace(joined), nil
	}
	if !v.list {
		return QuoteLiteral(joined), nil
	}
	if !v.quoted {
		return "", errorf(CodeInsufficientPrivilege, "an unquoted list expression can only be used inside a string literal; use its _Q_CSV form")
	}
	if len(v.items) == 0 {
		return "NULL", nil // x IN (NULL) matches nothing
	}
	parts := make([]string, len(v.items))
	for i, s := range v.items {
		parts[i] = QuoteLiteral(s)
	}
	return strings.Join(parts, ","), nil
}
