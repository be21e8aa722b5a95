package sqlrewrite

import (
	"strings"
	"testing"
)

// The scan's answers at a fixed stack (8 MiB: trees of at most 2,048
// levels, estimates of at most 10,922), so the messages are exact whatever
// the stack of the machine running the test.
func TestCheckComplexity(t *testing.T) {
	lim := limitsFor(8 << 20)
	rep := strings.Repeat
	tooDeep := func(what string, levels string) string {
		return "pgranger: statement is nested too deeply to analyse safely: " + what + " could make its parse tree " + levels +
			" levels deep; at most 2,048 levels are allowed with this process's 8 MiB C stack (ulimit -s)"
	}
	cases := []struct {
		name, sql string
		code, msg string
	}{
		{"plain", "SELECT a + b FROM t WHERE c = 1 AND d = 2", "", ""},
		{"a long chain", "SELECT 1" + rep("+1", 6000), "54001", tooDeep("6,000 operators on one path", "12,030")},
		{"a long cast chain", "SELECT 1" + rep("::int", 6000), "54001", tooDeep("6,000 operators on one path", "12,030")},
		{"OPERATOR(…) links count where they stand", "SELECT 1" + rep(" OPERATOR(pg_catalog.+) 1", 30000), "54001",
			tooDeep("30,000 operators on one path", "60,030")},
		{"cross joins", "SELECT 1 FROM t" + rep(" CROSS JOIN t", 30000), "54001", tooDeep("30,000 joins on one path", "60,030")},
		{"a union chain", "SELECT 1" + rep(" UNION ALL SELECT 1", 50000), "54001",
			tooDeep("50,000 UNION, INTERSECT or EXCEPT branches on one path", "50,030")},
		{"a union chain with select lists", "SELECT 1, 2" + rep(" UNION ALL SELECT 1, 2", 12000), "54001",
			tooDeep("12,000 UNION, INTERSECT or EXCEPT branches on one path", "12,030")},
		{"nested CASE", "SELECT " + rep("CASE WHEN true THEN ", 3000) + "1" + rep(" END", 3000), "54001",
			tooDeep("3,000 nested CASE expressions on one path", "12,030")},
		{"NOT above BETWEEN's bounds", "SELECT " + rep("NOT ", 3000) + "x BETWEEN 1 AND 1" + rep(" + 1", 3000), "54001",
			tooDeep("6,001 operators on one path", "12,034")},
		{"NOT above IS DISTINCT FROM's right side", "SELECT " + rep("NOT ", 3000) + "x IS DISTINCT FROM 1" + rep(" + 1", 3000), "54001",
			tooDeep("6,001 operators on one path", "12,032")},
		{"operator characters are operators each", "SELECT 1 " + rep("+-", 3000) + " 1", "54001", tooDeep("6,000 operators on one path", "12,030")},
		{"a select list", "SELECT " + rep("1+1, ", 10000) + "1 FROM t", "", ""},
		{"an AND chain", "SELECT 1 WHERE " + rep("a = 1 AND ", 10000) + "true", "", ""},
		{"an IN list", "SELECT 1 WHERE a IN (" + rep("1, ", 10000) + "1)", "", ""},
		{"a long CASE", "SELECT CASE" + rep(" WHEN a = 1 THEN b + 1", 10000) + " END FROM t", "", ""},
		{"operators in a string", "SELECT '" + rep("+", 30000) + "'", "", ""},
		{"operators in a dollar quote", "SELECT $q$" + rep("+1", 30000) + "$q$", "", ""},
		{"operators in a comment", "SELECT 1 /* " + rep("+1", 30000) + " */", "", ""},
		{"operators in an E string", `SELECT E'\'` + rep("+1", 30000) + `'`, "", ""},
		{"deep parentheses", "SELECT " + rep("(", 1001) + "1" + rep(")", 1001), "54001",
			"pgranger: statement nests parentheses, brackets or CASE expressions more than 1,000 deep (listen.max-nesting-depth)"},
		{"deep CASE", "SELECT " + rep("CASE WHEN true THEN ", 1001) + "1" + rep(" END", 1001), "54001",
			"pgranger: statement nests parentheses, brackets or CASE expressions more than 1,000 deep (listen.max-nesting-depth)"},
		{"too long", "SELECT '" + rep("x", 2000) + "'", "54000", "pgranger: statement is 2009 bytes, more than the 1000 allowed (listen.max-statement-bytes)"},
	}
	for _, c := range cases {
		maxBytes := 1 << 20
		if c.name == "too long" {
			maxBytes = 1000
		}
		err := checkComplexity(c.sql, maxBytes, 1000, lim)
		if c.name != "deep parentheses" && c.name != "deep CASE" && c.code != "54000" {
			err = checkComplexity(c.sql, maxBytes, noLimit, lim)
		}
		code, msg := "", ""
		if err != nil {
			code, msg = err.Code, err.Message
		}
		if code != c.code || msg != c.msg {
			t.Errorf("%s: got %s %q\nwant %s %q", c.name, code, msg, c.code, c.msg)
		}
	}
}
