package policy

import (
	"fmt"
	"testing"

	"github.com/pgranger/pgranger/ranger"
)

// bigBundle builds 10,000 access and 10,000 mask policies over 100
// databases of 100 tables, plus wildcard policies that every lookup has to
// consider, the shape of a large Ranger deployment.
func bigBundle() *ranger.Bundle {
	pr := func(v ...string) ranger.RangerPolicyResource { return ranger.RangerPolicyResource{Values: v} }
	item := func(access string, users, groups []string) ranger.RangerPolicyItem {
		return ranger.RangerPolicyItem{Accesses: []ranger.RangerPolicyItemAccess{{Type: access, IsAllowed: true}}, Users: users, Groups: groups}
	}
	sp := &ranger.ServicePolicies{ServiceName: "bench", PolicyVersion: 1, ServiceDef: StockHiveServiceDef()}
	id := int64(0)
	for d := 0; d < 100; d++ {
		for t := 0; t < 100; t++ {
			id++
			db, tbl := fmt.Sprintf("db%03d", d), fmt.Sprintf("t%03d", t)
			p := ranger.RangerPolicy{
				ID: id, Name: fmt.Sprintf("access %s.%s", db, tbl), IsEnabled: true, IsAuditEnabled: true,
				Resources: map[string]ranger.RangerPolicyResource{"database": pr(db), "table": pr(tbl), "column": pr("*")},
				PolicyItems: []ranger.RangerPolicyItem{
					item("select", []string{fmt.Sprintf("u%03d", id%200)}, []string{fmt.Sprintf("g%02d", id%50)}),
					item("update", nil, []string{"etl"}),
				},
			}
			if id%10 == 0 {
				p.DenyPolicyItems = []ranger.RangerPolicyItem{item("select", nil, []string{"contractors"})}
			}
			sp.Policies = append(sp.Policies, p)
			id++
			sp.Policies = append(sp.Policies, ranger.RangerPolicy{
				ID: id, Name: fmt.Sprintf("mask %s.%s.ssn", db, tbl), IsEnabled: true, IsAuditEnabled: true, PolicyType: ranger.PolicyTypeDataMask,
				Resources: map[string]ranger.RangerPolicyResource{"database": pr(db), "table": pr(tbl), "column": pr("ssn")},
				DataMaskPolicyItems: []ranger.RangerDataMaskPolicyItem{
					{RangerPolicyItem: item("select", []string{"auditor"}, nil), DataMaskInfo: &ranger.RangerPolicyItemDataMaskInfo{DataMaskType: "MASK_NONE"}},
					{RangerPolicyItem: item("select", nil, []string{"public"}), DataMaskInfo: &ranger.RangerPolicyItemDataMaskInfo{DataMaskType: "MASK_SHOW_LAST_4"}},
				},
			})
		}
	}
	for w := 0; w < 20; w++ {
		id++
		sp.Policies = append(sp.Policies, ranger.RangerPolicy{
			ID: id, Name: fmt.Sprintf("wildcard %d", w), IsEnabled: true, IsAuditEnabled: true,
			Resources:   map[string]ranger.RangerPolicyResource{"database": pr(fmt.Sprintf("db%d*", w%10)), "table": pr("*tmp*"), "column": pr("*")},
			PolicyItems: []ranger.RangerPolicyItem{item("all", nil, []string{"admins"})},
		})
	}
	return &ranger.Bundle{Policies: sp}
}

func benchEngine(b *testing.B) *Engine {
	e, err := NewEngine(bigBundle(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	return e
}

func BenchmarkAccess10k(b *testing.B) {
	e := benchEngine(b)
	s := &Subject{User: "u035", Groups: []string{"g35", "analysts", "emea"}}
	r := res("db042", "t017", "amount")
	if d := e.Access(s, r, "select", t0); !d.Allowed {
		b.Fatalf("expected allow: %+v", d)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Access(s, r, "select", t0)
	}
}

func BenchmarkMask10k(b *testing.B) {
	e := benchEngine(b)
	s := &Subject{User: "u035", Groups: []string{"g35", "analysts", "emea"}}
	r := res("db042", "t017", "ssn")
	if m := e.Mask(s, r, t0); m.Type != "MASK_SHOW_LAST_4" {
		b.Fatalf("expected a mask: %+v", m)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Mask(s, r, t0)
	}
}

func BenchmarkRowFilter10k(b *testing.B) {
	e := benchEngine(b)
	s := &Subject{User: "u010", Groups: []string{"g10"}}
	r := res("db042", "t017", "")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.RowFilter(s, r, t0)
	}
}

func BenchmarkNewEngine10k(b *testing.B) {
	bundle := bigBundle()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := NewEngine(bundle, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
