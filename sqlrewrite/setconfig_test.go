package sqlrewrite

import (
	"reflect"
	"strings"
	"testing"
)

// splitIdentifierList reads a search_path value as PostgreSQL's
// SplitIdentifierString does, and refuses what it refuses or would
// truncate.
func TestSplitIdentifierList(t *testing.T) {
	long := strings.Repeat("a", 64)
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "", want: []string{}},
		{in: "  ", want: []string{}},
		{in: "Sales", want: []string{"sales"}},
		{in: ` "$user" , public `, want: []string{"$user", "public"}},
		{in: `"My ""Schema""",x`, want: []string{`My "Schema"`, "x"}},
		{in: "a\t,\nB", want: []string{"a", "b"}},
		{in: "Ünï", want: []string{"Ünï"}},
		{in: strings.Repeat("a", 63), want: []string{strings.Repeat("a", 63)}},
		{in: long, err: "longer than 63"},
		{in: `"` + long + `"`, err: "longer than 63"},
		{in: "a,", err: "trailing comma"},
		{in: ",a", err: "an empty name"},
		{in: "a b", err: "something other than a comma"},
		{in: `"a`, err: "unterminated"},
		{in: `""`, err: "empty quoted"},
		{in: `"a"b`, err: "something other than a comma"},
		{in: "a\vb", want: []string{"a\vb"}}, // \v is not whitespace to PostgreSQL's scanner
	} {
		got, err := splitIdentifierList(c.in)
		if c.err != "" {
			if !strings.Contains(err, c.err) {
				t.Errorf("%q: got %q, %q; want an error with %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != "" || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %q, %q; want %q", c.in, got, err, c.want)
		}
	}
}
