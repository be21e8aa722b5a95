package authoring

import (
	"strings"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// The portable subset, case by case: what is written for each USING
// expression, or why it is refused.
func TestPortableExpressions(t *testing.T) {
	for _, tc := range []struct{ in, out, refused string }{
		{in: "region = 'EU'", out: "region = 'EU'"},
		{in: "region <> 'EU' AND amount >= 10", out: "region <> 'EU' AND amount >= 10"},
		{in: "region != 'EU' OR NOT (amount < 10)", out: "region <> 'EU' OR NOT (amount < 10)"},
		{in: "(a = 1 OR b = 2) AND c = 3", out: "(a = 1 OR b = 2) AND c = 3"},
		{in: "a = 1 OR b = 2 AND c = 3", out: "a = 1 OR b = 2 AND c = 3"},
		{in: "amount * 2 + 1 > limit_", out: "amount * 2 + 1 > limit_"},
		{in: "(amount + 1) * 2 > 5", out: "(amount + 1) * 2 > 5"},
		{in: "a - (b - c) = 0", out: "a - (b - c) = 0"},
		{in: "x % 2 = 0 AND -y < 0", out: "x % 2 = 0 AND -y < 0"},
		{in: "owner = current_user", out: "owner = '${{USER._name}}'"},
		{in: "owner = session_user OR owner = user", out: "owner = '${{USER._name}}' OR owner = '${{USER._name}}'"},
		{in: "region = '${{USER.region}}'", out: "region = '${{USER.region}}'"},
		{in: "region IN ('EU', 'UK') AND id NOT IN (1, 2)", out: "region IN ('EU', 'UK') AND id NOT IN (1, 2)"},
		{in: "name LIKE 'A%' AND name NOT LIKE '%z'", out: "name LIKE 'A%' AND name NOT LIKE '%z'"},
		{in: "d BETWEEN 1 AND 5 OR d NOT BETWEEN 7 AND 9", out: "d BETWEEN 1 AND 5 OR d NOT BETWEEN 7 AND 9"},
		{in: "deleted_at IS NULL AND x IS NOT NULL", out: "deleted_at IS NULL AND x IS NOT NULL"},
		{in: "CAST(id AS bigint) > 1 AND CAST(x AS varchar(10)) = 'a' AND CAST(p AS numeric(10,2)) < 1.5", out: "CAST(id AS BIGINT) > 1 AND CAST(x AS VARCHAR(10)) = 'a' AND CAST(p AS DECIMAL(10,2)) < 1.5"},
		{in: "lower(trim(name)) = 'x' AND length(upper(n)) < abs(-3)", out: "lower(trim(name)) = 'x' AND length(upper(n)) < abs(-3)"},
		{in: "coalesce(region, 'none') = 'EU'", out: "coalesce(region, 'none') = 'EU'"},
		{in: "CASE WHEN a > 1 THEN b ELSE c END = 2", out: "CASE WHEN a > 1 THEN b ELSE c END = 2"},
		{in: "d >= current_date AND t < current_timestamp", out: "d >= current_date AND t < current_timestamp"},
		{in: "flag = true OR flag IS NULL", out: "flag = TRUE OR flag IS NULL"},

		{in: "id::text = '1'", refused: "the :: cast"},
		{in: "region ILIKE 'e%'", refused: "ILIKE"},
		{in: "region SIMILAR TO 'e%'", refused: "SIMILAR TO"},
		{in: "region ~ '^E'", refused: "the regular-expression operator ~"},
		{in: "a || b = 'x'", refused: "the operator ||"},
		{in: "a / 2 = 1", refused: "the operator /"},
		{in: "a IS DISTINCT FROM b", refused: "IS DISTINCT FROM"},
		{in: "id IN (SELECT id FROM t)", refused: "a subquery"},
		{in: "EXISTS (SELECT 1)", refused: "a subquery"},
		{in: "o.region = 'EU'", refused: "a qualified column reference or *"},
		{in: `"Region" = 'EU'`, refused: `the quoted name "Region"`},
		{in: "name = 'O''Brien'", refused: "a string literal with a quote or a backslash"},
		{in: "now() > d", refused: "the function now()"},
		{in: "pg_catalog.lower(x) = 'a'", refused: "the function pg_catalog.lower()"},
		{in: "count(*) > 1", refused: "an aggregate or window call of count"},
		{in: "current_role = 'x'", refused: "current_role"},
		{in: "x = ANY(ARRAY[1])", refused: "= ANY/ALL"},
		{in: "CAST(x AS text) = 'a'", refused: "CAST to text"},
		{in: "x = $1", refused: "a $n parameter"},
		{in: "x COLLATE \"C\" = 'a'", refused: "COLLATE"},
		{in: "x IS TRUE", refused: "IS TRUE / IS FALSE / IS UNKNOWN"},
		{in: "greatest(a, b) > 1", refused: "GREATEST / LEAST"},
		{in: "substring(x from 1 for 2) = 'a'", refused: "the SQL-syntax function substring"},
	} {
		sql := "SELECT 1 WHERE " + tc.in
		tree, err := pg.Parse(sql)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		where := tree.Stmts[0].Stmt.GetSelectStmt().WhereClause
		got, perr := portable(where, sql, "", nil, "t")
		switch {
		case tc.refused != "":
			if perr == nil || perr.Code != "0A000" || !strings.HasPrefix(perr.Message, "pgranger: "+tc.refused+" is not allowed in a policy expression") {
				t.Errorf("%s: got %q %v, want refused naming %s", tc.in, got, perr, tc.refused)
			}
		case perr != nil:
			t.Errorf("%s: refused: %s", tc.in, perr.Message)
		case got != tc.out:
			t.Errorf("%s:\n got %s\nwant %s", tc.in, got, tc.out)
		default:
			// What is written parses again as one PostgreSQL expression
			// and prints the same.
			again := "SELECT 1 WHERE " + got
			tree2, err := pg.Parse(again)
			if err != nil {
				t.Errorf("%s: the output does not parse: %v", got, err)
				continue
			}
			if twice, _ := portable(tree2.Stmts[0].Stmt.GetSelectStmt().WhereClause, again, "", nil, "t"); twice != got && !strings.Contains(got, "${{") {
				t.Errorf("%s: printed again as %s", got, twice)
			}
		}
	}
}

func TestMaskLabelGrammar(t *testing.T) {
	for _, tc := range []struct{ label, want, err string }{
		{label: "MASK_NONE TO GROUP compliance; MASK_SHOW_LAST_4 TO GROUP analysts; MASK_NULL",
			want: "MASK_NONE[group:compliance] MASK_SHOW_LAST_4[group:analysts] MASK_NULL[]"},
		{label: "mask_hash to bob, user \"x y\", ROLE r, PUBLIC;", want: "MASK_HASH[:bob user:x y role:r group:public]"},
		{label: "CUSTOM(substr({col}, 1, 2) || ';)') TO alice", want: "CUSTOM(substr({col}, 1, 2) || ';)')[:alice]"},
		{label: "MASK TO", err: "mask label: expected a user, group or role after TO at the end (character 8 of the label)"},
		{label: "MASK MASK_NULL", err: `mask label: expected ; between items at "MASK_NULL" (character 6 of the label)`},
		{label: "CUSTOM TO bob", err: "mask label: CUSTOM needs an expression: CUSTOM(expr with {col})"},
		{label: "MASK_HASH(x)", err: "mask label: MASK_HASH takes no expression; only CUSTOM(expr) does"},
		{label: "CUSTOM(x", err: "mask label: expected a closing parenthesis at the end (character 9 of the label)"},
		{label: " ; ", err: `mask label: expected a mask type at "; " (character 2 of the label)`},
	} {
		items, err := parseMaskLabel(tc.label)
		if tc.err != "" {
			if err == nil || err.Message != "pgranger: "+tc.err || err.Code != "42601" {
				t.Errorf("%q: got %v, want %s", tc.label, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %s", tc.label, err.Message)
			continue
		}
		var parts []string
		for _, it := range items {
			s := it.maskType
			if it.expr != "" {
				s += "(" + it.expr + ")"
			}
			var ns []string
			for _, n := range it.names {
				ns = append(ns, n.kind+":"+n.name)
			}
			parts = append(parts, s+"["+strings.Join(ns, " ")+"]")
		}
		if got := strings.Join(parts, " "); got != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.label, got, tc.want)
		}
	}
}

func TestMarker(t *testing.T) {
	f := markFilter("a = 1 AND (b = 'x')", "p q")
	if f != "(a = 1 AND (b = 'x')) AND 'pgranger-policy:p q' IS NOT NULL" {
		t.Fatal(f)
	}
	if e, n, ok := parseMarked(f); !ok || e != "a = 1 AND (b = 'x')" || n != "p q" {
		t.Errorf("%q %q %t", e, n, ok)
	}
	for _, foreign := range []string{"region = 'EU'", "(a) AND 'pgranger-policy:x' IS NOT NULL OR true"} {
		if _, _, ok := parseMarked(foreign); ok {
			t.Errorf("%q read as pgranger's", foreign)
		}
	}
}
