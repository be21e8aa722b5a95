package policy

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/rangerexpr"
)

func TestNewEngineErrors(t *testing.T) {
	tests := []struct {
		name    string
		b       *ranger.Bundle
		opts    Options
		wantSub string
	}{
		{"nil bundle", nil, Options{}, "no service policies"},
		{"no policies document", &ranger.Bundle{}, Options{}, "no service policies"},
		{"bad mask precedence", testBundle(t, `{}`), Options{MaskPrecedence: "column"}, "mask precedence"},
		{"tag policies without a service-def", testBundle(t, `{"tagPolicies": {"policies": [{"id": 1}]}}`), Options{}, "tag service-def"},
		{"duplicate resource", testBundle(t, `{"serviceDef": {"name": "x", "resources": [{"name": "a"}, {"name": "a"}]}}`), Options{}, "twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewEngine(tc.b, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.wantSub) {
				t.Errorf("err = %v, want one mentioning %q", err, tc.wantSub)
			}
		})
	}
}

func TestAccessors(t *testing.T) {
	e := testEngine(t, `{"serviceName": "cm_hive", "policyVersion": 17, "auditMode": "audit-all", "policies": []}`)
	if e.ServiceName() != "cm_hive" || e.PolicyVersion() != 17 || e.AuditMode() != "audit-all" {
		t.Errorf("accessors: %q %d %q", e.ServiceName(), e.PolicyVersion(), e.AuditMode())
	}
	e = testEngine(t, `{}`)
	if e.PolicyVersion() != -1 || e.AuditMode() != ranger.AuditModeDefault {
		t.Errorf("defaults: %d %q", e.PolicyVersion(), e.AuditMode())
	}
}

// Resources named outside the service-def match nothing, as in Ranger.
func TestRequestAPI(t *testing.T) {
	e := testEngine(t, `{"policies": [
	  {"id": 1, "name": "url", "resources": {"url": {"values": ["s3a://bucket/data/"], "isRecursive": true}},
	   "policyItems": [{"accesses": [{"type": "read"}], "groups": ["public"]}]},
	  {"id": 2, "name": "db", "resources": {"database": {"values": ["*"]}, "table": {"values": ["*"]}, "column": {"values": ["*"]}},
	   "policyItems": [{"accesses": [{"type": "select"}], "groups": ["public"]}]}
	]}`)
	s := subj("alice")
	if d := e.AccessRequest(s, Request{Resource: map[string][]string{"url": {"s3a://bucket/data/x/y.parquet"}}, Access: "read", At: t0}); !d.Allowed || d.PolicyID != 1 {
		t.Errorf("url: %+v", d)
	}
	if d := e.AccessRequest(s, Request{Resource: map[string][]string{"url": {"s3a://bucket/other"}}, Access: "read", At: t0}); d.Allowed {
		t.Errorf("other url: %+v", d)
	}
	if d := e.AccessRequest(s, Request{Resource: map[string][]string{"database": {"d"}, "table": {"t"}, "bogus": {"x"}}, Access: "select", At: t0}); d.Allowed {
		t.Errorf("unknown resource name must not match: %+v", d)
	}
	if d := e.AccessRequest(s, Request{Resource: map[string][]string{"database": {"d"}, "table": {"t"}}, Access: "select"}); !d.Allowed {
		t.Errorf("zero time means now: %+v", d)
	}
}

func TestScripts(t *testing.T) {
	rq := &evalReq{
		groups: []string{"analysts"},
		roles:  []string{"fin-admin", "hr-admin"},
		at:     time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC),
		tags:   []*reqTag{{typ: "PII", attrs: map[string]string{"expiry": "2099/12/31"}}},
	}
	rq.curTag = rq.tags[0]
	rq.subj = &Subject{User: "u"}
	rq.e = &Engine{}
	good := []struct {
		src  string
		want bool
	}{
		{"IS_IN_ROLE('fin-admin') && IS_IN_ROLE('hr-admin') ", true},
		{"IS_IN_ROLE('fin-admin') && IS_IN_ROLE('x')", false},
		{"IS_IN_GROUP(\"analysts\") || false", true},
		{"!IS_IN_ANY_GROUP", false},
		{"IS_NOT_IN_ANY_ROLE", false},
		{"HAS_TAG('PII') && !HAS_NO_TAG", true},
		{"HAS_TAG_ATTR('expiry')", true},
		{"HAS_USER_ATTR('_name')", true},
		{"if ( ctx.isAccessedBefore('expiry') ) ctx.result = true;", true},
		{"if (ctx.isAccessedAfter('expiry')) { ctx.result = true; } else { ctx.result = false; }", false},
		{"ctx.isAccessedBefore('PII', 'expiry')", true},
		{"ctx.isAccessedAfter('missing')", true},
		{"ctx.isAccessedBefore('missing')", false},
		{"ctx.result = ctx.isInAnyRole();", true},
		{"(IS_IN_ROLE('a') || IS_IN_ROLE('hr-admin')) && ctx.hasAnyTag()", true},
	}
	for _, tc := range good {
		s, err := rangerexpr.ParseScript(tc.src)
		if err != nil {
			t.Errorf("ParseScript(%q): %v", tc.src, err)
			continue
		}
		if got, err := s.Condition(rq.exprEnv()); err != nil || got != tc.want {
			t.Errorf("%q = %v (%v), want %v", tc.src, got, err, tc.want)
		}
	}
	bad := []string{
		"IS_IN_ROLE(x)",
		"IS_IN_ROLE",
		"IS_IN_ANY_GROUP()",
		"eval('x')",
		"a = 1",
		"IS_IN_ROLE('a') & IS_IN_ROLE('b')",
		"'unterminated",
	}
	for _, src := range bad {
		if _, err := rangerexpr.ParseScript(src); err == nil {
			t.Errorf("ParseScript(%q) should fail", src)
		}
	}
}

func TestTagDates(t *testing.T) {
	tests := map[string]string{
		"2099/12/31":               "2099-12-31T00:00:00Z",
		"2015/08/10T15:05:15.000Z": "2015-08-10T00:00:00Z",
		"2099-12-31T15:05:15.000Z": "2099-12-31T15:05:15Z",
		"2024/2/3":                 "2024-02-03T00:00:00Z",
	}
	for in, want := range tests {
		got, ok := rangerexpr.ParseTagDate(in)
		if !ok || got.Format(time.RFC3339) != want {
			t.Errorf("rangerexpr.ParseTagDate(%q) = %v %v, want %s", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "tomorrow", "2024/02/30", "2024-02-03"} {
		if _, ok := rangerexpr.ParseTagDate(in); ok {
			t.Errorf("rangerexpr.ParseTagDate(%q) should fail", in)
		}
	}
}

func TestJavaTimeZones(t *testing.T) {
	ref := time.Date(2025, 1, 15, 12, 0, 0, 0, time.UTC)
	tests := map[string]int{"": 0, "GMT": 0, "GMT+05:30": 19800, "UTC-3": -10800, "PST": -28800, "EST": -18000, "Asia/Tokyo": 32400, "Nowhere/Zone": 0}
	for id, want := range tests {
		_, off := ref.In(javaTimeZone(id)).Zone()
		if off != want {
			t.Errorf("javaTimeZone(%q) offset %d, want %d", id, off, want)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	e := tagEngine(t, Options{})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			s := subj("u", "contractors")
			for i := 0; i < 200; i++ {
				if d := e.Access(s, res("sales", "customers", "ssn"), "select", t0); d.Allowed {
					t.Errorf("contractor allowed: %+v", d)
					return
				}
				_ = e.Mask(s, res("sales", "customers", "ssn"), t0)
				_ = e.RowFilter(s, res("sales", "customers", ""), t0)
				_ = e.RolesOf(s)
			}
		}(g)
	}
	wg.Wait()
}
