package sqlrewrite

import (
	"strings"
	"testing"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/rangerexpr"
)

// macroEnv is the identity of the expression tests: bob, in two groups
// with group attributes, holding two roles.
func macroEnv() *rangerexpr.Env {
	return &rangerexpr.Env{
		User:   "bob",
		Attrs:  map[string]string{"_name": "bob", "region": "US", "dept": "r&d", "evil": "x' OR '1'='1", "empty": "", "n": "42"},
		Groups: []string{"analysts", "emea"},
		GroupAttrs: map[string]map[string]string{
			"analysts": {"_name": "analysts", "dept": "ENGG", "site": "a"},
			"emea":     {"_name": "emea", "dept": "PROD"},
		},
		Roles: []string{"analyst", "reader"},
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
	env := &rangerexpr.Env{User: "nobody", Attrs: map[string]string{"_name": "nobody"}, GroupAttrs: map[string]map[string]string{}}
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
		{`${{TAG.level}}`, `TAG is undefined: the expression belongs to a resource policy`},
		{`${{ctx.tagNamesCsv()}}`, `unquoted list can only be used inside a string literal`},
		{`${{REQ.clientIPAddress}}`, `REQ.clientIPAddress is not available`},
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
		env.Attrs["v"] = h
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
	r := &stmtRewriter{rw: New(Options{}), env: &Env{Policy: policy.Snapshot{Engine: eng, Generation: 1}}, sess: &Session{Subject: subj}}
	got, e := r.expandMacros(`region = ${{USER.region}} AND site = '${{USER.site}}' AND dept IN (${{GET_UG_ATTR_Q('dept')}}) AND r IN (${{UR_NAMES_Q_CSV}}) AND g = '${{UG_NAMES_CSV}}'`, exprScope{})
	if e != nil {
		t.Fatal(e)
	}
	want := `region = 'US' AND site = 'berlin' AND dept IN ('ENGG','PROD') AND r IN ('analyst','emea_readers') AND g = 'analysts,emea'`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Without an engine only the identity's own attributes exist.
	r.env.Policy.Engine = nil
	if got, e := r.expandMacros(`s = ${{USER.site}}`, exprScope{}); e == nil {
		t.Errorf("without the user store USER.site should be missing, got %s", got)
	}
}

// tagEnv is macroEnv for a CUSTOM mask on sales.customers.ssn that a tag
// policy for the column's PII tag holds: the column's own PII tag, its
// table's REGION and PII tags and its database's FIN tag.
func tagEnv() *rangerexpr.Env {
	env := macroEnv()
	setExprResource(env, policy.Resource{Database: "sales", Table: "customers", Column: "ssn", Owner: "postgres"})
	env.Tags = []rangerexpr.Tag{
		{Type: "PII", Attributes: map[string]string{"level": "high", "evil": "x' OR '1'='1"}, MatchType: "SELF"},
		{Type: "REGION", Attributes: map[string]string{"region": "EU"}, MatchType: "ANCESTOR"},
		{Type: "PII", Attributes: map[string]string{"level": "low"}, MatchType: "ANCESTOR"},
		{Type: "FIN", Attributes: map[string]string{"level": "mid"}, MatchType: "ANCESTOR"},
	}
	env.Tag = &env.Tags[0]
	return env
}

func TestExpandExprsTagsAndRequest(t *testing.T) {
	cases := []struct{ in, want string }{
		// Tag variables.
		{`'${{TAGNAMES}}'`, `'FIN,PII,REGION'`},
		{`n = ${{TAGNAMES.length}}`, `n = 3`},
		{`${{TAGNAMES.includes('REGION')}}`, `true`},
		{`l = ${{TAGS.PII.level}}`, `l = 'high'`}, // the first PII tag in stored order
		{`r = ${{TAGS['REGION'].region}}`, `r = 'EU'`},
		{`m = ${{TAGS.REGION._matchType}}`, `m = 'ANCESTOR'`},
		{`t = ${{TAGS.FIN._type}}`, `t = 'FIN'`},
		{`${{TAGS.NOPE == null}}`, `true`},
		{`x = ${{TAGS.NOPE ? 1 : 0}}`, `x = 0`},
		{`l = ${{TAG.level}}`, `l = 'high'`},
		{`l = '${{TAG.level}}'`, `l = 'high'`},
		{`t = ${{TAG._type}}`, `t = 'PII'`},
		{`m = ${{TAG._matchType}}`, `m = 'SELF'`},
		{`l = ${{tagAttr.level}}`, `l = 'high'`},
		{`x = ${{TAG.nope || 'none'}}`, `x = 'none'`},
		{`e = '${{TAG.evil}}'`, `e = 'x'' OR ''1''=''1'`},
		{`e = ${{TAG.evil}}`, `e = 'x'' OR ''1''=''1'`},

		// Tag macros.
		{`${{HAS_TAG('PII')}}`, `true`},
		{`${{HAS_TAG('pii')}}`, `false`}, // tag types are case-sensitive
		{`${{HAS_ANY_TAG}}`, `true`},
		{`${{HAS_NO_TAG}}`, `false`},
		{`${{HAS_TAG_ATTR('region')}}`, `true`},
		{`${{HAS_TAG_ATTR('_type')}}`, `false`},
		{`'${{GET_TAG_NAMES()}}'`, `'FIN,PII,REGION'`},
		{`'${{GET_TAG_NAMES(null, null)}}'`, `'FINPIIREGION'`},
		{`t IN (${{GET_TAG_NAMES_Q()}})`, `t IN ('FIN','PII','REGION')`},
		{`'${{TAG_NAMES_CSV}}'`, `'FIN,PII,REGION'`},
		{`t IN (${{TAG_NAMES_Q_CSV}})`, `t IN ('FIN','PII','REGION')`},
		// one value per tag type (PII's first tag), in the order of the
		// type names, as Ranger's getTagAttr
		{`'${{GET_TAG_ATTR('level')}}'`, `'mid,high'`},
		{`'${{GET_TAG_ATTR('level', 'none', '|')}}'`, `'mid|high'`},
		{`l IN (${{GET_TAG_ATTR_Q('level')}})`, `l IN ('mid','high')`},
		{`'${{GET_TAG_ATTR_CSV('level')}}'`, `'mid,high'`},
		{`l IN (${{GET_TAG_ATTR_Q_CSV('level')}})`, `l IN ('mid','high')`},
		{`'${{GET_TAG_ATTR('nope', 'none')}}'`, `'none'`},
		{`l IN (${{GET_TAG_ATTR_Q('nope', 'none')}})`, `l IN ('none')`},
		{`e IN (${{GET_TAG_ATTR_Q('evil')}})`, `e IN ('x'' OR ''1''=''1')`},
		{`'${{GET_TAG_ATTR_NAMES()}}'`, `'evil,level,region'`},
		{`k IN (${{GET_TAG_ATTR_NAMES_Q()}})`, `k IN ('evil','level','region')`},
		{`'${{TAG_ATTR_NAMES_CSV}}'`, `'evil,level,region'`},
		{`k IN (${{TAG_ATTR_NAMES_Q_CSV}})`, `k IN ('evil','level','region')`},
		{`${{HAS_TAG('PII') && !HAS_TAG('SECRET') ? 'ok' : 'no'}}`, `'ok'`},
		{`t = ${{ctx.getCurrentTagType()}}`, `t = 'PII'`},
		{`l = ${{ctx.getAttributeValue('level')}}`, `l = 'high'`},
		{`r = ${{ctx.getAttributeValue('REGION', 'region')}}`, `r = 'EU'`},
		{`${{ctx.hasTag('FIN')}}`, `true`},

		// The request.
		{`a = ${{REQ.accessType}}`, `a = 'select'`},
		{`u = ${{REQ.user}}`, `u = 'bob'`},
		{`'${{REQ.userGroups}}'`, `'analysts,emea'`},
		{`${{REQ.userRoles.includes('reader')}}`, `true`},
		{`r = ${{REQ.userAttributes.region}}`, `r = 'US'`},
		{`d = ${{REQ.userGroupAttributes.emea.dept}}`, `d = 'PROD'`},
		{`d = ${{REQ.uga.sVal.dept}}`, `d = 'ENGG'`},
		{`s = ${{REQ.resourceMatchingScope}}`, `s = 'SELF'`},
		{`t = ${{REQ.resource.table}}`, `t = 'customers'`},
		{`c = ${{RES.column}}`, `c = 'ssn'`},
		{`n = ${{RES.database + '.' + RES['table']}}`, `n = 'sales.customers'`},
		{`o = ${{RES._ownerUser}}`, `o = 'postgres'`},
		{`x = ${{REQ.nope || 'none'}}`, `x = 'none'`},
	}
	env := tagEnv()
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

// A resource without tags: lists are empty and defaults apply.
func TestExpandExprsNoTags(t *testing.T) {
	env := macroEnv()
	setExprResource(env, policy.Resource{Database: "sales", Table: "orders"})
	cases := []struct{ in, want string }{
		{`${{HAS_ANY_TAG}}`, `false`},
		{`${{HAS_NO_TAG}}`, `true`},
		{`${{HAS_TAG('PII')}}`, `false`},
		{`${{HAS_TAG_ATTR('level')}}`, `false`},
		{`t IN (${{TAG_NAMES_Q_CSV}})`, `t IN (NULL)`},
		{`t = '${{TAG_NAMES_CSV}}'`, `t = ''`},
		{`t = '${{TAGNAMES}}'`, `t = ''`},
		{`t = '${{GET_TAG_NAMES('none')}}'`, `t = 'none'`},
		{`t IN (${{GET_TAG_NAMES_Q('none')}})`, `t IN ('none')`},
		{`l IN (${{GET_TAG_ATTR_Q('level', 'none')}})`, `l IN ('none')`},
		{`k IN (${{TAG_ATTR_NAMES_Q_CSV}})`, `k IN (NULL)`},
		{`x = ${{TAGS.PII ? 1 : 0}}`, `x = 0`},
		{`t = ${{RES.table}}`, `t = 'orders'`},
	}
	for _, c := range cases {
		got, err := expandExprs(c.in, env)
		if err != nil || got != c.want {
			t.Errorf("%s: got %s (%v), want %s", c.in, got, err, c.want)
		}
	}
}

func TestExpandExprsTagsAndRequestDeny(t *testing.T) {
	tagged := tagEnv()
	// A row filter of a resource policy on the table: no current tag, no
	// column.
	table := macroEnv()
	setExprResource(table, policy.Resource{Database: "sales", Table: "customers"})
	table.Tags = tagged.Tags[1:3]
	cases := []struct {
		env     *rangerexpr.Env
		in, why string
	}{
		{tagged, `${{TAGS.NOPE.level}}`, `tag "NOPE" of the column sales.customers.ssn is missing`},
		{tagged, `${{TAG.nope}}`, `attribute "nope" of tag PII is missing`},
		{tagged, `${{TAG.nope == 'x'}}`, `attribute "nope" of tag PII is missing`},
		{tagged, `${{TAGS.FIN.region}}`, `attribute "region" of tag FIN is missing`},
		{tagged, `l IN (${{GET_TAG_ATTR_Q('nope')}})`, `attribute "nope" of the tags of the column sales.customers.ssn is missing`},
		{tagged, `l = '${{GET_TAG_ATTR_CSV('nope')}}'`, `attribute "nope" of the tags of the column sales.customers.ssn is missing`},
		{tagged, `${{ctx.getAttributeValue('nope')}}`, `attribute "nope" of tag PII is missing`},
		{tagged, `${{ctx.getAttributeValue('NOPE', 'x')}}`, `attribute "x" of tag NOPE`},
		{tagged, `t IN (${{TAG_NAMES_CSV}})`, `unquoted list can only be used inside a string literal`},
		{tagged, `t IN (${{GET_TAG_ATTR('level')}})`, `unquoted list can only be used inside a string literal`},
		{tagged, `t = '${{TAG_NAMES_Q_CSV}}'`, `quoted list cannot be used inside a string literal`},
		{tagged, `${{TAG}}`, `object`},
		{tagged, `${{TAGS}}`, `object`},
		{tagged, `${{HAS_TAG}}`, `needs arguments`},
		{tagged, `${{HAS_ANY_TAG()}}`, `takes no arguments`},
		{tagged, `${{tag.type}}`, `use TAG`},
		{tagged, `${{_ctx.request.user}}`, `not supported`},
		{tagged, `${{ctx.isAccessedBefore('expiry')}}`, `cannot depend on the request's time`},
		{tagged, `${{ctx.getAllTagTypes()}}`, `not supported`},
		{tagged, `${{REQ.clientIPAddress}}`, `REQ.clientIPAddress is not available: a rewrite is cached per statement and identity, so a row filter or mask cannot depend on the client's address`},
		{tagged, `${{REQ.clientIPAddress || '10.0.0.1'}}`, `REQ.clientIPAddress is not available`},
		{tagged, `${{REQ['accessTime'] > 0}}`, `REQ.accessTime is not available: a rewrite is cached per statement and identity, so a row filter or mask cannot depend on the time of access`},
		{tagged, `${{REQ.remoteIPAddress}}`, `client's address`},
		{tagged, `${{REQ.forwardedAddresses}}`, `client's address`},
		{tagged, `${{REQ.clusterName}}`, `no cluster name`},
		{tagged, `${{REQ.action}}`, `REQ.action is not available`},
		{tagged, `${{REQ.requestData}}`, `REQ.requestData is not available`},
		{tagged, `${{REQ.nope}}`, `request field "nope" is missing`},
		{tagged, `${{REQ}}`, `object`},
		{tagged, `${{RES}}`, `object`},
		{table, `${{TAG.level}}`, `TAG is undefined: the expression belongs to a resource policy, not a tag policy, so there is no current tag (use TAGS, HAS_TAG or GET_TAG_ATTR for the tags of the table sales.customers)`},
		{table, `${{TAG ? 'a' : 'b'}}`, `TAG is undefined`},
		{table, `${{tagAttr.level}}`, `tagAttr is undefined`},
		{table, `${{ctx.getCurrentTagType()}}`, `is undefined`},
		{table, `${{ctx.getAttributeValue('level')}}`, `is undefined`},
		{table, `c = ${{RES.column}}`, `resource element column of the table sales.customers (a row filter is evaluated for a table, not a column) is missing`},
		{macroEnv(), `o = ${{RES._ownerUser}}`, `resource element "_ownerUser"`},
	}
	for _, c := range cases {
		got, err := expandExprs(c.in, c.env)
		if err == nil {
			t.Errorf("%s: expanded to %s, want a denial (%s)", c.in, got, c.why)
			continue
		}
		if !strings.Contains(err.Message, c.why) {
			t.Errorf("%s: %s, want it to mention %q", c.in, err.Message, c.why)
		}
	}
}

// Hostile tag attribute values stay one string constant, like user
// attributes.
func TestExpandExprsTagInjection(t *testing.T) {
	hostile := []string{`x' OR '1'='1`, `x'); DROP TABLE t; --`, `\' OR 1=1 --`, `$$ OR true $$`, `*/ OR true /*`}
	templates := []string{
		`region = '${{TAG.v}}'`, `region = ${{TAG.v}}`, `region = E'${{TAGS.PII.v}}'`,
		`region IN (${{GET_TAG_ATTR_Q('v')}})`, `region = '${{GET_TAG_ATTR('v')}}'`, `region = E${{tagAttr.v}}`,
		`region IN (${{GET_TAG_ATTR_Q('v')}}) AND region NOT IN (${{GET_TAG_NAMES_Q()}})`,
	}
	for _, h := range hostile {
		env := tagEnv()
		env.Tags = []rangerexpr.Tag{{Type: h, Attributes: map[string]string{"v": h}, MatchType: "SELF"}, {Type: "PII", Attributes: map[string]string{"v": h}, MatchType: "SELF"}}
		env.Tag = &env.Tags[0]
		for _, tmpl := range templates {
			out, err := expandExprs(tmpl, env)
			if err != nil {
				t.Errorf("%q with %q: %v", tmpl, h, err)
				continue
			}
			tree, perr := pg.Parse("SELECT " + out)
			if perr != nil {
				t.Errorf("%q with %q: %s does not parse: %v", tmpl, h, out, perr)
				continue
			}
			if len(tree.Stmts) != 1 || len(tree.Stmts[0].Stmt.GetSelectStmt().GetTargetList()) != 1 {
				t.Errorf("%q with %q: %s is more than one expression", tmpl, h, out)
				continue
			}
			found := false
			walkNodes(tree.Stmts[0].Stmt, func(n *pg.Node) bool {
				if c := n.GetAConst(); c != nil && c.GetSval() != nil && strings.Contains(c.GetSval().Sval, h) {
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

// The tags come from the engine: TagsOf for the resource the expression is
// evaluated for, and the current tag from the scope.
func TestExpandMacrosTagsFromEngine(t *testing.T) {
	st, err := ranger.ParseServiceTags([]byte(`{"serviceName": "svc", "tagVersion": 1,
	 "tags": {"1": {"type": "PII", "attributes": {"level": "high"}}, "2": {"type": "REGION", "attributes": {"region": "EU"}}},
	 "serviceResources": [
	   {"id": 10, "resourceElements": {"database": {"values": ["sales"]}, "table": {"values": ["customers"]}, "column": {"values": ["ssn"]}}},
	   {"id": 11, "resourceElements": {"database": {"values": ["sales"]}, "table": {"values": ["customers"]}}}],
	 "resourceToTagIds": {"10": [1], "11": [2]}}`))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := policy.NewEngine(&ranger.Bundle{Policies: &ranger.ServicePolicies{ServiceName: "svc", Policies: []ranger.RangerPolicy{}}, Tags: st}, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	subj := &policy.Subject{User: "bob"}
	r := &stmtRewriter{rw: New(Options{}), env: &Env{Policy: policy.Snapshot{Engine: eng, Generation: 1}}, sess: &Session{Subject: subj}}
	const expr = `t IN (${{TAG_NAMES_Q_CSV}}) AND r = ${{TAGS.REGION.region}} AND m = ${{TAGS.REGION._matchType}} AND c = '${{RES.column}}'`
	column := policy.Resource{Database: "sales", Table: "customers", Column: "ssn"}
	got, e := r.expandMacros(expr, exprScope{res: column})
	if want := `t IN ('PII','REGION') AND r = 'EU' AND m = 'ANCESTOR' AND c = 'ssn'`; e != nil || got != want {
		t.Errorf("column: got %s (%v)\nwant %s", got, e, want)
	}
	// A table's row filter does not see its columns' tags.
	got, e = r.expandMacros(`t IN (${{TAG_NAMES_Q_CSV}}) AND m = ${{TAGS.REGION._matchType}}`, exprScope{res: policy.Resource{Database: "sales", Table: "customers"}})
	if want := `t IN ('REGION') AND m = 'SELF'`; e != nil || got != want {
		t.Errorf("table: got %s (%v)\nwant %s", got, e, want)
	}
	tags := eng.TagsOf(subj, column, time.Time{})
	got, e = r.expandMacros(`l = ${{TAG.level}}`, exprScope{res: column, tag: &tags[0]})
	if want := `l = 'high'`; e != nil || got != want {
		t.Errorf("current tag: got %s (%v), want %s", got, e, want)
	}
}
