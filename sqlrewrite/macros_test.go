package sqlrewrite

import (
	"strings"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
)

// macroEnv is the identity of the expression tests: bob, in two groups
// with group attributes, holding two roles.
func macroEnv() *exprEnv {
	return &exprEnv{
		user:   "bob",
		attrs:  map[string]string{"_name": "bob", "region": "US", "dept": "r&d", "evil": "x' OR '1'='1", "empty": "", "n": "42"},
		groups: []string{"analysts", "emea"},
		groupAttrs: map[string]map[string]string{
			"analysts": {"_name": "analysts", "dept": "ENGG", "site": "a"},
			"emea":     {"_name": "emea", "dept": "PROD"},
		},
		roles: []string{"analyst", "reader"},
	}
}

func TestExpandExprs(t *testing.T) {
	cases := []struct{ in, want string }{
		// Variables.
		{`region = '${{USER.region}}'`, `region = 'US'`},
		{`region = ${{USER.region}}`, `region = 'US'`},
		{`u = ${{USER._name}}`, `u = 'bob'`},
		{`region = ${{USER['region']}}`, `region = 'US'`},
		{`region = ${{USER["region"]}}`, `region = 'US'`},
		{`dept = ${{UG['analysts'].dept}}`, `dept = 'ENGG'`},
		{`dept = ${{UG["emea"]["dept"]}}`, `dept = 'PROD'`},
		{`g = ${{UG.emea._name}}`, `g = 'emea'`},
		{`dept = ${{UGA.sVal.dept}}`, `dept = 'ENGG'`},
		{`dept IN (${{UGA.mVal.dept.join(',')}})`, `dept IN ('ENGG,PROD')`}, // joined text is one string
		{`'${{UGA.mVal.dept}}'`, `'ENGG,PROD'`},
		{`'${{UGNAMES}}'`, `'analysts,emea'`},
		{`'${{URNAMES}}'`, `'analyst,reader'`},
		{`g = ${{UGNAMES[1]}}`, `g = 'emea'`},
		{`n = ${{UGNAMES.length}}`, `n = 2`},

		// User attribute macros.
		{`region = ${{GET_USER_ATTR('region')}}`, `region = 'US'`},
		{`region = ${{GET_USER_ATTR('nope', 'ZZ')}}`, `region = 'ZZ'`},
		{`region IN (${{GET_USER_ATTR_Q('region')}})`, `region IN ('US')`},
		{`region IN (${{GET_USER_ATTR_Q('nope', 'ZZ')}})`, `region IN ('ZZ')`},
		{`'${{GET_USER_ATTR_NAMES()}}'`, `'dept,empty,evil,n,region'`},
		{`'${{GET_USER_ATTR_NAMES(null, '|')}}'`, `'dept|empty|evil|n|region'`},
		{`k IN (${{GET_USER_ATTR_NAMES_Q()}})`, `k IN ('dept','empty','evil','n','region')`},
		{`'${{USER_ATTR_NAMES_CSV}}'`, `'dept,empty,evil,n,region'`},
		{`k IN (${{USER_ATTR_NAMES_Q_CSV}})`, `k IN ('dept','empty','evil','n','region')`},
		{`${{HAS_USER_ATTR('region')}}`, `true`},
		{`${{HAS_USER_ATTR('nope')}}`, `false`},

		// Group macros.
		{`'${{GET_UG_NAMES()}}'`, `'analysts,emea'`},
		{`'${{GET_UG_NAMES(null, null)}}'`, `'analystsemea'`},
		{`g IN (${{GET_UG_NAMES_Q()}})`, `g IN ('analysts','emea')`},
		{`g IN (${{GET_UG_NAMES_Q(null, ', ')}})`, `g IN ('analysts', 'emea')`},
		{`'${{UG_NAMES_CSV}}'`, `'analysts,emea'`},
		{`g IN (${{UG_NAMES_Q_CSV}})`, `g IN ('analysts','emea')`},
		{`'${{GET_UG_ATTR('dept')}}'`, `'ENGG,PROD'`},
		{`d IN (${{GET_UG_ATTR_Q('dept')}})`, `d IN ('ENGG','PROD')`},
		{`d IN (${{GET_UG_ATTR_Q('site')}})`, `d IN ('a')`},
		{`d IN (${{GET_UG_ATTR_Q('nope', 'none')}})`, `d IN ('none')`},
		{`g IN (${{GET_UR_NAMES_Q()}}) OR ${{IS_IN_ANY_ROLE}}`, `g IN ('analyst','reader') OR true`},
		{`'${{GET_UG_ATTR_CSV('dept')}}'`, `'ENGG,PROD'`},
		{`d IN (${{GET_UG_ATTR_Q_CSV('dept')}})`, `d IN ('ENGG','PROD')`},
		{`'${{GET_UG_ATTR_NAMES()}}'`, `'dept,site'`},
		{`k IN (${{GET_UG_ATTR_NAMES_Q()}})`, `k IN ('dept','site')`},
		{`'${{UG_ATTR_NAMES_CSV}}'`, `'dept,site'`},
		{`k IN (${{UG_ATTR_NAMES_Q_CSV}})`, `k IN ('dept','site')`},
		{`${{HAS_UG_ATTR('site')}}`, `true`},
		{`${{HAS_UG_ATTR('region')}}`, `false`},
		{`${{IS_IN_GROUP('emea')}}`, `true`},
		{`${{IS_IN_GROUP('public')}}`, `false`},
		{`${{IS_IN_ANY_GROUP}}`, `true`},
		{`${{IS_NOT_IN_ANY_GROUP}}`, `false`},

		// Role macros.
		{`'${{GET_UR_NAMES()}}'`, `'analyst,reader'`},
		{`r IN (${{GET_UR_NAMES_Q()}})`, `r IN ('analyst','reader')`},
		{`'${{UR_NAMES_CSV}}'`, `'analyst,reader'`},
		{`r IN (${{UR_NAMES_Q_CSV}})`, `r IN ('analyst','reader')`},
		{`${{IS_IN_ROLE('reader')}}`, `true`},
		{`${{IS_IN_ROLE('admin')}}`, `false`},
		{`${{IS_IN_ANY_ROLE}}`, `true`},
		{`${{IS_NOT_IN_ANY_ROLE}}`, `false`},

		// The ctx methods the macros expand to.
		{`${{ctx.isInGroup('analysts') && ctx.isInRole('analyst')}}`, `true`},
		{`g IN (${{ctx.ugNamesCsvQ()}})`, `g IN ('analysts','emea')`},
		{`r = ${{ctx.userAttr('region')}}`, `r = 'US'`},

		// Expression forms.
		{`${{USER.region == 'US'}}`, `true`},
		{`${{USER.region === 'EU'}}`, `false`},
		{`${{USER.region != 'EU' && !IS_IN_ROLE('admin')}}`, `true`},
		{`${{USER.n == 42}}`, `true`},
		{`${{USER.n > 40 && USER.n <= 42}}`, `true`},
		{`region = ${{IS_IN_GROUP('emea') ? 'EU' : USER.region}}`, `region = 'EU'`},
		{`region = ${{USER.nope || 'none'}}`, `region = 'none'`},
		{`region = ${{HAS_USER_ATTR('nope') ? USER.nope : 'none'}}`, `region = 'none'`},
		{`${{USER.nope == null}}`, `true`},
		{`${{!USER.nope}}`, `true`},
		{`k = ${{USER.region + '-' + USER._name}}`, `k = 'US-bob'`},
		{`k = ${{USER.region.toLowerCase()}}`, `k = 'us'`},
		{`${{UGNAMES.includes('emea')}}`, `true`},
		{`${{[[USER.dept,'&']].includes('d')}}`, `true`},
		{`${{[[USER.region]].intersects(['US','EU'])}}`, `true`},
		{`${{URNAMES.indexOf('reader')}}`, `1`},
		{`x > ${{-1}}`, `x > (-1)`},
		{`x = ${{1 + 2}}`, `x = 3`},

		// Inside string literals values are escaped; outside they are literals.
		{`dept = '${{USER.dept}}'`, `dept = 'r&d'`},
		{`region = '${{USER.evil}}'`, `region = 'x'' OR ''1''=''1'`},
		{`region = ${{USER.evil}}`, `region = 'x'' OR ''1''=''1'`},
		{`region = E'${{USER.evil}}\n'`, `region = E'x'' OR ''1''=''1\n'`},
		{`region LIKE '%${{USER.region}}%'`, `region LIKE '%US%'`},
		{`e = ${{USER.empty}}`, `e = ''`},
		{`f = '${{IS_IN_ROLE('reader')}}'`, `f = 'true'`},
		// A value never merges with its neighbours.
		{`x=E${{USER.region}}`, `x=E 'US'`},
		{`x = ${{USER.region}}'y'`, `x = 'US' 'y'`},
		{`x = 1${{USER.n.length}}`, `x = 1 2`},
		{`${{IS_IN_GROUP('emea')}}AND x`, `true AND x`},
	}
	env := macroEnv()
	for _, c := range cases {
		got, err := expandExprs(c.in, env)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s:\n got  %s\n want %s", c.in, got, c.want)
		}
	}
}

// A user in no group and no role: lists are empty, defaults apply.
func TestExpandExprsEmptyLists(t *testing.T) {
	env := &exprEnv{user: "nobody", attrs: map[string]string{"_name": "nobody"}, groupAttrs: map[string]map[string]string{}}
	cases := []struct{ in, want string }{
		{`g IN (${{UG_NAMES_Q_CSV}})`, `g IN (NULL)`},
		{`g IN (${{GET_UG_NAMES_Q('none')}})`, `g IN ('none')`},
		{`g = '${{UG_NAMES_CSV}}'`, `g = ''`},
		{`g = '${{GET_UR_NAMES('-')}}'`, `g = '-'`},
		{`${{IS_NOT_IN_ANY_GROUP && IS_NOT_IN_ANY_ROLE}}`, `true`},
		{`d IN (${{GET_UG_ATTR_Q('dept', 'none')}})`, `d IN ('none')`},
		{`k IN (${{USER_ATTR_NAMES_Q_CSV}})`, `k IN (NULL)`},
	}
	for _, c := range cases {
		got, err := expandExprs(c.in, env)
		if err != nil || got != c.want {
			t.Errorf("%s: got %s (%v), want %s", c.in, got, err, c.want)
		}
	}
}

func TestExpandExprsDenies(t *testing.T) {
	cases := []struct{ in, why string }{
		{`region = '${{USER.nope}}'`, `attribute "nope" of user "bob" is missing`},
		{`region = ${{GET_USER_ATTR('nope')}}`, `attribute "nope" of user "bob" is missing`},
		{`region IN (${{GET_USER_ATTR_Q('nope')}})`, `attribute "nope" of user "bob" is missing`},
		{`d = ${{UG['nobody'].dept}}`, `group "nobody" of user "bob" is missing`},
		{`d IN (${{GET_UG_ATTR_Q('nope')}})`, `attribute "nope" of the groups of user "bob" is missing`},
		{`d = '${{GET_UG_ATTR_CSV('nope')}}'`, `attribute "nope" of the groups of user "bob" is missing`},
		{`d = ${{UGA.sVal.nope}}`, `group attribute "nope" of user "bob" is missing`},
		{`${{USER.nope == 'US'}}`, `is missing`},
		{`${{USER.nope + 'x'}}`, `is missing`},
		{`g IN (${{UG_NAMES_CSV}})`, `unquoted list can only be used inside a string literal`},
		{`g IN (${{UGNAMES}})`, `a list can only be used inside a string literal`},
		{`g = '${{UG_NAMES_Q_CSV}}'`, `quoted list cannot be used inside a string literal`},
		{`g IN (${{GET_UG_NAMES_Q(null, ' OR ')}})`, `separator`},
		{`g IN (${{GET_UG_NAMES_Q(null, '')}})`, `separator`},
		{`g IN (${{GET_UG_NAMES_Q(null, ',', '"')}})`, `cannot be made safe`},
		{`${{USER}}`, `object`},
		{`${{HAS_TAG('PII')}}`, `tag expressions are not available`},
		{`${{TAG.level}}`, `tag expressions are not available`},
		{`${{GET_TAG_NAMES_Q()}}`, `tag expressions are not available`},
		{`${{ctx.tagNamesCsv()}}`, `tag expressions are not available`},
		{`${{REQ.user}}`, `not supported`},
		{`${{IS_ACCESS_TIME_AFTER('2020/01/01')}}`, `not supported`},
		{`${{NOPE}}`, `not a known variable or macro`},
		{`${{USER.region; drop table x}}`, `not supported`},
		{`${{x = 1}}`, `not supported`},
		{`${{GET_USER_ATTR}}`, `needs arguments`},
		{`${{UG_NAMES_CSV()}}`, `takes no arguments`},
		{`${{eval('1')}}`, `not a known variable or macro`},
		{`${{USER.region.constructor('x')}}`, `not supported`},
		{`${{}}`, `empty`},
		{`"${{USER.region}}"`, `quoted identifier`},
		{`x -- ${{USER.region}}`, `comment`},
		{`$$${{USER.region}}$$`, `dollar-quoted`},
		{`x = ${{USER.region`, `unterminated`},
		{`${{` + strings.Repeat("(", 100) + `1` + strings.Repeat(")", 100) + `}}`, `nested too deeply`},
	}
	env := macroEnv()
	for _, c := range cases {
		got, err := expandExprs(c.in, env)
		if err == nil {
			t.Errorf("%s: expanded to %s, want a denial (%s)", c.in, got, c.why)
			continue
		}
		if !strings.Contains(err.Message, c.why) {
			t.Errorf("%s: %s, want it to mention %q", c.in, err.Message, c.why)
		}
	}
}

// Every expansion of a hostile attribute value must parse as one
// expression in which the value is a single string constant.
func TestExpandExprsInjection(t *testing.T) {
	hostile := []string{`x' OR '1'='1`, `x'); DROP TABLE t; --`, `\' OR 1=1 --`, `$$ OR true $$`, `*/ OR true /*`, "a\nb", `''`}
	templates := []string{
		`region = '${{USER.v}}'`, `region = ${{USER.v}}`, `region = E'${{USER.v}}'`,
		`region IN (${{GET_USER_ATTR_Q('v')}})`, `region = ${{GET_USER_ATTR('v')}}`,
		`region = E${{USER.v}}`, `region = U&${{USER.v}}`, `region = ''${{USER.v}}`,
	}
	for _, h := range hostile {
		env := macroEnv()
		env.attrs["v"] = h
		for _, tmpl := range templates {
			out, err := expandExprs(tmpl, env)
			if err != nil {
				continue // denied: safe
			}
			tree, perr := pg.Parse("SELECT " + out)
			if perr != nil {
				continue // does not parse: the table is denied
			}
			if len(tree.Stmts) != 1 || len(tree.Stmts[0].Stmt.GetSelectStmt().GetTargetList()) != 1 {
				t.Errorf("%q with %q: %s is more than one expression", tmpl, h, out)
				continue
			}
			found := false
			walkNodes(tree.Stmts[0].Stmt, func(n *pg.Node) bool {
				if c := n.GetAConst(); c != nil && c.GetSval() != nil && strings.Contains(c.GetSval().Sval, strings.TrimSuffix(h, "\n")) {
					found = true
				}
				return true
			})
			if !found {
				t.Errorf("%q with %q: %s does not keep the value as one string", tmpl, h, out)
			}
		}
	}
}

// The expression context comes from the engine: user-store attributes
// under the identity's, group attributes, and RangerRoles membership.
func TestExpandMacrosFromEngine(t *testing.T) {
	sp := &ranger.ServicePolicies{ServiceName: "svc", Policies: []ranger.RangerPolicy{}}
	bundle := &ranger.Bundle{
		Policies: sp,
		Roles: &ranger.RangerRoles{RangerRoles: []ranger.RangerRole{
			{Name: "emea_readers", IsEnabled: true, Groups: []ranger.RoleMember{{Name: "emea"}}},
		}},
		UserStore: &ranger.RangerUserStore{
			UserAttrMapping:  map[string]ranger.StringMap{"bob": {"region": "EU", "site": "berlin"}},
			GroupAttrMapping: map[string]ranger.StringMap{"emea": {"dept": "PROD"}, "analysts": {"dept": "ENGG"}},
		},
	}
	eng, err := policy.NewEngine(bundle, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	subj := &policy.Subject{User: "bob", Groups: []string{"emea", "analysts"}, Roles: []string{"analyst"}, Attributes: map[string]string{"region": "US"}}
	r := &stmtRewriter{rw: New(Options{}), env: &Env{Policy: PolicyState{Engine: eng, Generation: 1}}, sess: &Session{Subject: subj}}
	got, e := r.expandMacros(`region = ${{USER.region}} AND site = '${{USER.site}}' AND dept IN (${{GET_UG_ATTR_Q('dept')}}) AND r IN (${{UR_NAMES_Q_CSV}}) AND g = '${{UG_NAMES_CSV}}'`)
	if e != nil {
		t.Fatal(e)
	}
	want := `region = 'US' AND site = 'berlin' AND dept IN ('ENGG','PROD') AND r IN ('analyst','emea_readers') AND g = 'analysts,emea'`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Without an engine only the identity's own attributes exist.
	r.env.Policy.Engine = nil
	if got, e := r.expandMacros(`s = ${{USER.site}}`); e == nil {
		t.Errorf("without the user store USER.site should be missing, got %s", got)
	}
}
