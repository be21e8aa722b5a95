package rangerexpr

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// condEnv is a request as a condition script sees it: two groups with
// attributes, two roles, a user attribute, two tags (PII current) on the
// column db1.tbl1.col1.
func condEnv() *Env {
	return &Env{
		User:   "test-user",
		Attrs:  map[string]string{"_name": "test-user", "state": "CA"},
		Groups: []string{"test-group1", "test-group2"},
		GroupAttrs: map[string]map[string]string{
			"test-group1": {"_name": "test-group1", "dept": "ENGG", "site": "10"},
			"test-group2": {"_name": "test-group2", "dept": "PROD", "site": "20"},
		},
		Roles:    []string{"test-role1", "test-role2"},
		Resource: map[string]string{"database": "db1", "table": "tbl1", "column": "col1", "_ownerUser": "testUser"},
		What:     "column db1.tbl1.col1",
		Tags: []Tag{
			{Type: "PII", Attributes: map[string]string{"attr1": "PII_value", "expiry": "2026/01/01"}, MatchType: "SELF"},
			{Type: "PCI", Attributes: map[string]string{"attr1": "PCI_value"}, MatchType: "SELF"},
		},
		Request: &Request{AccessType: "select", Action: "query", ClientIP: "10.1.2.3",
			AccessTime: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC), Context: map[string]string{"country": "US"}},
	}
}

func TestScriptValues(t *testing.T) {
	env := condEnv()
	env.Tag = &env.Tags[0]
	text := map[string]string{
		"UG_NAMES_CSV":                              "test-group1,test-group2",
		"UR_NAMES_Q_CSV":                            "'test-role1','test-role2'",
		"TAG_NAMES_CSV":                             "PCI,PII",
		"USER_ATTR_NAMES_CSV":                       "state",
		"UG_ATTR_NAMES_CSV":                         "dept,site",
		"GET_UG_ATTR_CSV('dept')":                   "ENGG,PROD",
		"GET_TAG_ATTR_Q_CSV('attr1')":               "'PCI_value','PII_value'",
		"GET_TAG_NAMES(null, '|')":                  "PCI|PII",
		"GET_TAG_NAMES_Q(null, ',', '{', '}')":      "{PCI},{PII}",
		"GET_UG_NAMES_Q(null, null)":                "'test-group1''test-group2'",
		"TAGS['PII'].attr1":                         "PII_value",
		"USER.state + '-' + RES.table":              "CA-tbl1",
		"REQ.clientIPAddress":                       "10.1.2.3",
		"ctx.getRequestContextAttribute('country')": "US",
	}
	for src, want := range text {
		v, err := Eval(src, env)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if got, err := v.Text(); err != nil || got != want {
			t.Errorf("%s = %q (%v), want %q", src, got, err, want)
		}
	}
	truths := map[string]bool{
		"USER._name == 'test-user'":                  true,
		"USER['state'] == 'CA'":                      true,
		"HAS_USER_ATTR('notExists')":                 false,
		"IS_IN_GROUP('test-group2')":                 true,
		"IS_NOT_IN_ANY_GROUP":                        false,
		"UG['test-group1'].site == 10":               true,
		"UG['test-group3'] == null":                  true,
		"UG['test-group1'].notExists == null":        true,
		"IS_IN_ROLE('notExists')":                    false,
		"IS_IN_ANY_ROLE":                             true,
		"UGA.sVal['dept'] == 'ENGG'":                 true,
		"UGA.sVal['notExists'] == null":              true,
		"UGA.mVal['dept'].indexOf('PROD') != -1":     true,
		"UGA.mVal['dept'].indexOf('EXEC') == -1":     true,
		"REQ.accessType == 'select'":                 true,
		"REQ.action == 'query'":                      true,
		"RES._ownerUser == 'testUser'":               true,
		"RES.column == 'col1'":                       true,
		"TAG._type == 'PII'":                         true,
		"TAGS['PII'].notExists == undefined":         true,
		"TAGNAMES.length == 2":                       true,
		"HAS_NO_TAG":                                 false,
		"ctx.isAccessedBefore('expiry')":             true,
		"ctx.isAccessedAfter('PII', 'expiry')":       false,
		"USER.missing == 'x'":                        false, // undefined, as in Ranger
		"!USER.missing":                              true,
		"ctx.getClientIPAddress().startsWith('10.')": true,
		"10 - 4 * 2 == 2 && 7 % 4 == 3":              true,
		// the access time is 2025/06/01 12:00 UTC
		"IS_ACCESS_TIME_AFTER('2025/06/01 11:59')":                       true,
		"IS_ACCESS_TIME_AFTER('2025/06/01 12:00:00')":                    false, // strictly after
		"IS_ACCESS_TIME_BEFORE('2025/06/02')":                            true,
		"IS_ACCESS_TIME_BETWEEN('2025/06/01 12:00', '2025/06/01 13:00')": true,  // from inclusive
		"IS_ACCESS_TIME_BETWEEN('2025/05/01', '2025/06/01 12:00')":       false, // to exclusive
		"IS_ACCESS_TIME_AFTER('2025/06/01 13:30', 'Europe/Berlin')":      true,  // 11:30 UTC
		"IS_ACCESS_TIME_BEFORE('2025/06/01 13:30', 'Europe/Berlin')":     false,
		"IS_ACCESS_TIME_AFTER('tomorrow')":                               true,  // unreadable: -1
		"IS_ACCESS_TIME_BEFORE('')":                                      true,  // both -1: Ranger tests "after -1" first
		"ctx.isAccessTimeBetween('2025/13/01', '2026/02/01')":            false, // month 13: 2026/01/01
	}
	for src, want := range truths {
		v, err := Eval(src, env)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if v.Kind() != Bool || v.Truthy() != want {
			t.Errorf("%s = %+v, want %v", src, v, want)
		}
	}
}

func TestConditionScripts(t *testing.T) {
	env := condEnv()
	cases := map[string]bool{
		"IS_IN_GROUP('test-group1')":                                            true,
		"if (IS_IN_GROUP('test-group1')) { ctx.result = true; }":                true,
		"if (IS_IN_GROUP('nobody')) { ctx.result = true; }":                     false, // no branch ran: ctx.result
		"if (IS_IN_GROUP('nobody')) ctx.result = true; else ctx.result = false": false,
		"ctx.result = USER.state == 'CA';":                                      true,
		"ctx.result = true; 'a string'":                                         true, // not boolean: ctx.result
		"var d = USER.state; let ok = d == 'CA'; ok":                            true,
		"var n = 0; n = n + 1; n == 1":                                          true,
		"{ ctx.result = false; } ;;":                                            false,
		"USER.state":                                                            false, // a string: ctx.result, false
	}
	for src, want := range cases {
		p, err := ParseScript(src)
		if err != nil {
			t.Errorf("ParseScript(%q): %v", src, err)
			continue
		}
		got, err := p.Condition(env)
		if err != nil || got != want {
			t.Errorf("%q = %v (%v), want %v", src, got, err, want)
		}
	}
}

// Every failure is an error, for the caller to fail closed on.
func TestScriptFailures(t *testing.T) {
	env := condEnv()
	runErrs := map[string]string{
		"ctx.noSuchFunction('x')":                   "ctx.noSuchFunction is not supported",
		"USER.missing.deeper == 1":                  "cannot read",
		"false" + strings.Repeat(" || false", 1100): ErrBudget.Error(),
		"var a = 'xxxxxxxxxxxxxxxx'; var b = a + a; var c = b + b; var d = c + c; var e = d + d; var f = e + e; var g = f + f; var h = g + g; var i = h + h; var j = i + i; var k = j + j; var l = k + k; var m = l + l; var o = m + m": ErrBudget.Error(),
	}
	for src, want := range runErrs {
		p, err := ParseScript(src)
		if err == nil {
			_, err = p.Condition(env)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.60q: want an error mentioning %q, got %v", src, want, err)
		}
	}
	p, _ := ParseScript("false" + strings.Repeat(" || false", 1100))
	if _, err := p.Condition(env); !errors.Is(err, ErrBudget) {
		t.Errorf("over budget: %v", err)
	}
	env.Budget = 10
	p, _ = ParseScript("true && true && true && true && true && true")
	if _, err := p.Condition(env); !errors.Is(err, ErrBudget) {
		t.Errorf("a small budget: %v", err)
	}
	if _, err := Eval("IS_ACCESS_TIME_AFTER('2020/01/01')", &Env{}); err == nil || !strings.Contains(err.Error(), "cannot depend on the request") {
		t.Errorf("IS_ACCESS_TIME_AFTER in a row filter: %v", err)
	}
	for _, src := range []string{"eval('x')", "while (true) {}", "function f() {}", "x = 1", "ctx.result == ", "java.lang.System.exit(0)", "this.constructor"} {
		if _, err := ParseScript(src); err == nil {
			t.Errorf("ParseScript(%q) should fail", src)
		}
	}
}

// In a row filter or mask (no Request) what depends on the request is an
// error, and so is a missing attribute used as a value.
func TestRewriteModeDenies(t *testing.T) {
	env := condEnv()
	env.Request = nil
	for src, want := range map[string]string{
		"REQ.clientIPAddress":            "REQ.clientIPAddress is not available",
		"ctx.getClientIPAddress()":       "cannot depend on the request",
		"ctx.isAccessedBefore('expiry')": "cannot depend on the request",
		"USER.missing == 'x'":            "attribute \"missing\" of user \"test-user\" is missing",
	} {
		_, err := Eval(src, env)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want %q, got %v", src, want, err)
		}
	}
}

func TestReadsClient(t *testing.T) {
	for src, want := range map[string]bool{
		"IS_IN_GROUP('a') && USER.dept == 'x'":        false,
		"ctx.isAccessedBefore('expiry')":              false,
		"REQ.accessType == 'select'":                  true,
		"ctx.getClientIPAddress() == '10.0.0.1'":      true,
		"ctx.getRequestContextAttribute('c') == 'US'": true,
	} {
		p, err := ParseScript(src)
		if err != nil {
			t.Fatal(err)
		}
		if p.ReadsClient() != want {
			t.Errorf("%s: ReadsClient = %v, want %v", src, p.ReadsClient(), want)
		}
		if time := strings.Contains(src, "ccess") || strings.Contains(src, "REQ"); p.ReadsTime() != time {
			t.Errorf("%s: ReadsTime = %v, want %v", src, p.ReadsTime(), time)
		}
	}
}

func TestRegistry(t *testing.T) {
	for name, f := range funcs {
		if f.fn == nil {
			t.Errorf("%s has no implementation", name)
		}
	}
	// Every macro names a registered function.
	for name, m := range macros {
		if _, ok := funcs[m.method]; !ok {
			t.Errorf("macro %s expands to ctx.%s, which is not registered", name, m.method)
		}
	}
}
