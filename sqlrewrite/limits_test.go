package sqlrewrite

import (
	"strings"
	"testing"
)

func TestCheckComplexity(t *testing.T) {
	long := "SELECT 1" + strings.Repeat("+1", maxChain+1)
	cases := []struct {
		name, sql string
		code      string
	}{
		{"plain", "SELECT a + b FROM t WHERE c = 1 AND d = 2", ""},
		{"long chain", long, CodeStatementTooComplex},
		{"long cast chain", "SELECT 1" + strings.Repeat("::int", maxChain+1), CodeStatementTooComplex},
		{"chain split by commas", "SELECT " + strings.Repeat("1+1,", maxChain), ""},
		{"chain split by AND", "SELECT 1 WHERE " + strings.Repeat("a=1 AND ", maxChain) + "true", ""},
		{"operators in a string", "SELECT '" + strings.Repeat("+", 3*maxChain) + "'", ""},
		{"operators in a dollar quote", "SELECT $q$" + strings.Repeat("+1", 3*maxChain) + "$q$", ""},
		{"operators in a comment", "SELECT 1 /* " + strings.Repeat("+1", 3*maxChain) + " */", ""},
		{"operators in an E string", `SELECT E'\'` + strings.Repeat("+1", 3*maxChain) + `'`, ""},
		{"deep parentheses", "SELECT " + strings.Repeat("(", 1001) + "1" + strings.Repeat(")", 1001), CodeStatementTooComplex},
		{"too long", "SELECT '" + strings.Repeat("x", 2000) + "'", CodeProgramLimitExceeded},
	}
	for _, c := range cases {
		err := checkComplexity(c.sql, 1<<20, 1000)
		if c.name == "too long" {
			err = checkComplexity(c.sql, 1000, 1000)
		}
		got := ""
		if err != nil {
			got = err.Code
		}
		if got != c.code {
			t.Errorf("%s: code %q, want %q (%v)", c.name, got, c.code, err)
		}
	}
}
