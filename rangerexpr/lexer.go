package rangerexpr

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The lexer of Ranger's expression language (the JavaScript subset its
// ${{…}} macros and script conditions use).

type exprTok struct {
	kind string // "str", "num", "id", or the punctuation itself; "" at the end
	text string
	num  float64
}

func lexExpr(src string) ([]exprTok, error) {
	var toks []exprTok
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '\'' || c == '"':
			var sb strings.Builder
			j := i + 1
			for ; j < len(src) && src[j] != c; j++ {
				if src[j] != '\\' {
					sb.WriteByte(src[j])
					continue
				}
				j++
				if j >= len(src) {
					break
				}
				switch src[j] {
				case 'n':
					sb.WriteByte('\n')
				case 't':
					sb.WriteByte('\t')
				case 'r':
					sb.WriteByte('\r')
				case '0':
					sb.WriteByte(0)
				default:
					sb.WriteByte(src[j])
				}
			}
			if j >= len(src) {
				return nil, fmt.Errorf("unterminated string")
			}
			toks = append(toks, exprTok{kind: "str", text: sb.String()})
			i = j + 1
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '.') {
				j++
			}
			f, err := strconv.ParseFloat(src[i:j], 64)
			if err != nil {
				return nil, fmt.Errorf("bad number %q", src[i:j])
			}
			toks = append(toks, exprTok{kind: "num", text: src[i:j], num: f})
			i = j
		case c == '_' || c == '$' || c < utf8.RuneSelf && unicode.IsLetter(rune(c)):
			j := i
			for j < len(src) && (src[j] == '_' || src[j] == '$' || src[j] < utf8.RuneSelf && (unicode.IsLetter(rune(src[j])) || unicode.IsDigit(rune(src[j])))) {
				j++
			}
			toks = append(toks, exprTok{kind: "id", text: src[i:j]})
			i = j
		default:
			op := ""
			for _, cand := range []string{"===", "!==", "==", "!=", "<=", ">=", "&&", "||", "(", ")", "[", "]", "{", "}", ".", ",", ";", "?", ":", "!", "<", ">", "+", "-", "*", "/", "%", "="} {
				if strings.HasPrefix(src[i:], cand) {
					op = cand
					break
				}
			}
			if op == "" {
				r, _ := utf8.DecodeRuneInString(src[i:])
				return nil, fmt.Errorf("%q is not supported", string(r))
			}
			toks = append(toks, exprTok{kind: op})
			i += len(op)
		}
	}
	return toks, nil
}
