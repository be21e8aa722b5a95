package policy

import "testing"

func TestWildcardMatch(t *testing.T) {
	tests := []struct {
		s, pat string
		want   bool
	}{
		{"orders", "orders", true},
		{"orders", "ord*", true},
		{"orders", "*ers", true},
		{"orders", "o*d*s", true},
		{"orders", "ord?rs", true},
		{"ordrs", "ord?rs", false},
		{"orders", "*", true},
		{"", "*", true},
		{"", "?", false},
		{"a/b/c", "a*c", true},
		{"abc", "a**c", true},
		{"漢字表", "漢?表", true},
		{"orders", "orders?", false},
	}
	for _, tc := range tests {
		if got := wildcardMatch(tc.s, tc.pat); got != tc.want {
			t.Errorf("wildcardMatch(%q, %q) = %v, want %v", tc.s, tc.pat, got, tc.want)
		}
	}
}

func TestClassifyValue(t *testing.T) {
	tests := []struct {
		v        string
		wildCard bool
		kind     valueKind
		pat      string
	}{
		{"sales", true, vkLiteral, "sales"},
		{"sales*", true, vkPrefix, "sales"},
		{"sales**", true, vkPrefix, "sales"},
		{"*_tmp", true, vkSuffix, "_tmp"},
		{"*", true, vkPrefix, ""},
		{"s?les", true, vkWildcard, "s?les"},
		{"a*b*", true, vkWildcard, "a*b*"},
		{"a*b", true, vkWildcard, "a*b"},
		{"*", false, vkPrefix, ""}, // mask resources: a lone '*' still matches everything (Ranger 2.6, 2.9)
		{"**", false, vkPrefix, ""},
		{"sa*", false, vkLiteral, "sa*"},
	}
	for _, tc := range tests {
		kind, pat := classifyValue(tc.v, tc.wildCard)
		if kind != tc.kind || pat != tc.pat {
			t.Errorf("classifyValue(%q, %v) = %v %q, want %v %q", tc.v, tc.wildCard, kind, pat, tc.kind, tc.pat)
		}
	}
}

func TestFold(t *testing.T) {
	for in, want := range map[string]string{"Sales": "sales", "sales": "sales", "ÜBER": "über", "İ": "i"} {
		if got := fold(in); got != want {
			t.Errorf("fold(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReplaceTokens(t *testing.T) {
	o := parseMatchOpts(stockHive.Resources[0])
	tc := &tokenCtx{user: "alice", owner: "bob"}
	tests := map[string]string{
		"db_{USER}":        "db_alice",
		"{OWNER}_x":        "bob_x",
		"{ROLES}":          "{ROLES}", // unknown tokens stay
		`\{USER}`:          "{USER}",  // escaped delimiter
		"a{USER":           "a{USER",  // unterminated
		"{USER}_{OWNER}_z": "alice_bob_z",
	}
	for in, want := range tests {
		if got := replaceTokens(in, &o, tc); got != want {
			t.Errorf("replaceTokens(%q) = %q, want %q", in, got, want)
		}
	}
	noOwner := &tokenCtx{user: "alice"}
	if got := replaceTokens("{OWNER}", &o, noOwner); got != "{OWNER}" {
		t.Errorf("unset owner should stay a token, got %q", got)
	}
}

func TestRecursivePathMatch(t *testing.T) {
	tests := []struct {
		path, pat string
		want      bool
	}{
		{"/public/user1/tax.db", "/public/*", true},
		{"/public", "/public/*", false},
		{"/finance/restricted/sales.db", "/finance/restricted/*", true},
		{"/finance/other/x", "/finance/restricted/*", false},
		{"/a/b", "/a/b", true},
	}
	for _, tc := range tests {
		if got := recursiveWildcardPathMatch(tc.path, tc.pat, '/'); got != tc.want {
			t.Errorf("recursiveWildcardPathMatch(%q, %q) = %v, want %v", tc.path, tc.pat, got, tc.want)
		}
	}
	urls := []struct {
		url, pat string
		want     bool
	}{
		{"s3a://bucket/demo/x/y", "s3a://bucket/demo/*", true},
		{"s3a://bucket/other", "s3a://bucket/demo/*", false},
		{"not a url", "*", false},
	}
	for _, tc := range urls {
		if got := recursiveWildcardURLMatch(tc.url, tc.pat, '/'); got != tc.want {
			t.Errorf("recursiveWildcardURLMatch(%q, %q) = %v, want %v", tc.url, tc.pat, got, tc.want)
		}
	}
}

// The match-type rules of RangerDefaultPolicyResourceMatcher.getMatchType.
func TestMatchTypes(t *testing.T) {
	sd, err := compileServiceDef(StockHiveServiceDef(), "")
	if err != nil {
		t.Fatal(err)
	}
	view := sd.views[viewAccess]
	pr := func(kv ...string) map[string]rangerPR {
		m := map[string]rangerPR{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = rangerPR{Values: []string{kv[i+1]}}
		}
		return m
	}
	req := func(db, tbl, col string) *reqResource {
		r := newReqResource(len(sd.names))
		r.set(sd.idxOf("database"), db)
		r.set(sd.idxOf("table"), tbl)
		r.set(sd.idxOf("column"), col)
		return r
	}
	tests := []struct {
		name   string
		policy map[string]rangerPR
		req    *reqResource
		want   matchType
	}{
		{"same level", pr("database", "d", "table", "t", "column", "c"), req("d", "t", "c"), mtSelf},
		{"table request, policy t/*", pr("database", "d", "table", "t", "column", "*"), req("d", "t", ""), mtSelfAndAllDescendants},
		{"table request, policy t/c1", pr("database", "d", "table", "t", "column", "c1"), req("d", "t", ""), mtDescendant},
		{"db request, policy d/*/*", pr("database", "d", "table", "*", "column", "*"), req("d", "", ""), mtSelfAndAllDescendants},
		{"db request, policy d/t*/*", pr("database", "d", "table", "t*", "column", "*"), req("d", "", ""), mtDescendant},
		{"column request, db policy", pr("database", "d"), req("d", "t", "c"), mtAncestor},
		{"no match", pr("database", "d", "table", "t", "column", "*"), req("d", "u", "c"), mtNone},
		{"empty request", pr("database", "d"), req("", "", ""), mtDescendant},
		{"empty request, match-any", pr("database", "*"), req("", "", ""), mtSelfAndAllDescendants},
		{"gap in request", pr("database", "d", "table", "*", "column", "*"), req("d", "", "c"), mtNone},
		{"url policy, table request", pr("url", "s3a://x"), req("d", "t", ""), mtNone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pm := newPolicyResMatcher(sd, view, toRanger(tc.policy))
			got, _ := pm.matchType(tc.req, &tokenCtx{})
			if got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
