package policy

import (
	"reflect"
	"testing"
)

// One Evaluate asking for several parts answers each as a request for
// that part alone does.
func TestEvaluateTogetherAsApart(t *testing.T) {
	e, err := NewEngine(benchBundle(1000), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Subject{{User: "u007", Groups: []string{"g07"}}, {User: "x", Groups: []string{"contractors"}}, {User: "y", Groups: []string{"etl"}}} {
		for _, r := range []Resource{{Database: "db000", Table: "t007", Column: "ssn"}, {Database: "db001", Table: "t042", Column: "email"}, {Database: "db000", Table: "t007"}} {
			all := e.Evaluate(&Request{Subject: s, Hive: r, Access: "select", At: t0, Want: WantAccess | WantMask | WantRowFilter | WantAudit | WantTags})
			apart := Result{
				Access:    e.Access(s, r, "select", t0),
				Mask:      e.Mask(s, r, t0),
				RowFilter: e.RowFilter(s, r, t0),
				Audited:   e.Evaluate(&Request{Subject: s, Hive: r, Access: "select", At: t0, Want: WantAudit, Decided: Decided{Denied: !e.Access(s, r, "select", t0).Allowed}}).Audited,
				Tags:      e.TagsOf(s, r, t0),
			}
			if !reflect.DeepEqual(*all, apart) {
				t.Errorf("%s on %+v: together %+v, apart %+v", s.User, r, *all, apart)
			}
		}
	}
}
