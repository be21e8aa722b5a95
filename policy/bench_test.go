package policy

import (
	"fmt"
	"testing"

	"github.com/pgranger/pgranger/ranger"
)

// benchSizes are the bundle sizes the benchmarks run at:
//
//	go test ./policy -run '^$' -bench . -benchmem
var benchSizes = []int{10, 1000, 10000}

// benchBundle builds a bundle of n policies, the shape of a Ranger
// deployment: 60% access policies on one exact table each (databases of
// 100 tables), 10% access policies with wildcard resources (db1*, *tmp*,
// t0?5, …) that every lookup has to consider, 20% mask policies on exact
// columns and 10% row-filter policies on exact tables. Every tenth access
// policy also has a deny item, so deny-capable policies are in the mix.
// The benchmarked requests go to table benchTable, which has an access, a
// mask and a row-filter policy at every size.
func benchBundle(n int) *ranger.Bundle {
	pr := func(v ...string) ranger.RangerPolicyResource { return ranger.RangerPolicyResource{Values: v} }
	item := func(access string, users, groups []string) ranger.RangerPolicyItem {
		return ranger.RangerPolicyItem{Accesses: []ranger.RangerPolicyItemAccess{{Type: access, IsAllowed: true}}, Users: users, Groups: groups}
	}
	table := func(i int) (string, string) { return fmt.Sprintf("db%03d", i/100), fmt.Sprintf("t%03d", i%100) }
	nExact, nWild, nMask := n*6/10, n/10, n*2/10
	nFilter := n - nExact - nWild - nMask
	sp := &ranger.ServicePolicies{ServiceName: "bench", PolicyVersion: 1, ServiceDef: StockHiveServiceDef()}
	id := int64(0)
	add := func(p ranger.RangerPolicy) {
		id++
		p.ID, p.IsEnabled, p.IsAuditEnabled = id, true, true
		sp.Policies = append(sp.Policies, p)
	}
	for i := 0; i < nExact; i++ {
		db, tbl := table(i)
		p := ranger.RangerPolicy{
			Name:      fmt.Sprintf("access %s.%s", db, tbl),
			Resources: map[string]ranger.RangerPolicyResource{"database": pr(db), "table": pr(tbl), "column": pr("*")},
			PolicyItems: []ranger.RangerPolicyItem{
				item("select", []string{fmt.Sprintf("u%03d", i%200)}, []string{fmt.Sprintf("g%02d", i%50)}),
				item("update", nil, []string{"etl"}),
			},
		}
		if i%10 == 0 {
			p.DenyPolicyItems = []ranger.RangerPolicyItem{item("select", nil, []string{"contractors"})}
		}
		add(p)
	}
	wild := []func(w int) map[string]ranger.RangerPolicyResource{
		func(w int) map[string]ranger.RangerPolicyResource {
			return map[string]ranger.RangerPolicyResource{"database": pr(fmt.Sprintf("db%d*", w%10)), "table": pr("*tmp*"), "column": pr("*")}
		},
		func(w int) map[string]ranger.RangerPolicyResource {
			return map[string]ranger.RangerPolicyResource{"database": pr("*"), "table": pr(fmt.Sprintf("t0?%d", w%10)), "column": pr("c*")}
		},
		func(w int) map[string]ranger.RangerPolicyResource {
			return map[string]ranger.RangerPolicyResource{"database": pr(fmt.Sprintf("db0%d?", w%10)), "table": pr("*"), "column": pr("*")}
		},
	}
	for w := 0; w < nWild; w++ {
		add(ranger.RangerPolicy{
			Name:        fmt.Sprintf("wildcard %d", w),
			Resources:   wild[w%len(wild)](w),
			PolicyItems: []ranger.RangerPolicyItem{item("all", nil, []string{fmt.Sprintf("admins%d", w)})},
		})
	}
	for i := 0; i < nMask; i++ {
		db, tbl := table(i / 2)
		col := "ssn"
		if i%2 == 1 {
			col = "email"
		}
		add(ranger.RangerPolicy{
			Name: fmt.Sprintf("mask %s.%s.%s", db, tbl, col), PolicyType: ranger.PolicyTypeDataMask,
			Resources: map[string]ranger.RangerPolicyResource{"database": pr(db), "table": pr(tbl), "column": pr(col)},
			DataMaskPolicyItems: []ranger.RangerDataMaskPolicyItem{
				{RangerPolicyItem: item("select", []string{"auditor"}, nil), DataMaskInfo: &ranger.RangerPolicyItemDataMaskInfo{DataMaskType: "MASK_NONE"}},
				{RangerPolicyItem: item("select", nil, []string{"public"}), DataMaskInfo: &ranger.RangerPolicyItemDataMaskInfo{DataMaskType: "MASK_SHOW_LAST_4"}},
			},
		})
	}
	for i := 0; i < nFilter; i++ {
		db, tbl := table(i)
		add(ranger.RangerPolicy{
			Name: fmt.Sprintf("filter %s.%s", db, tbl), PolicyType: ranger.PolicyTypeRowFilter,
			Resources: map[string]ranger.RangerPolicyResource{"database": pr(db), "table": pr(tbl)},
			RowFilterPolicyItems: []ranger.RangerRowFilterPolicyItem{
				{RangerPolicyItem: item("select", []string{"auditor"}, nil)},
				{RangerPolicyItem: item("select", nil, []string{"public"}), RowFilterInfo: &ranger.RangerPolicyItemRowFilterInfo{FilterExpr: "region = '${{USER.region}}'"}},
			},
		})
	}
	return &ranger.Bundle{Policies: sp}
}

// benchTable is a table with access, mask and row-filter policies at every
// size: the middle of the tables that have a row filter.
func benchTable(n int) (db, table string, user string) {
	nFilter := n - n*6/10 - n/10 - n*2/10
	i := nFilter / 2
	return fmt.Sprintf("db%03d", i/100), fmt.Sprintf("t%03d", i%100), fmt.Sprintf("u%03d", i%200)
}

func benchSubject(n int) (*Subject, string, string) {
	db, tbl, user := benchTable(n)
	return &Subject{User: user, Groups: []string{"analysts", "emea"}}, db, tbl
}

func BenchmarkAccess(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("policies=%d", n), func(b *testing.B) {
			e, err := NewEngine(benchBundle(n), Options{})
			if err != nil {
				b.Fatal(err)
			}
			s, db, tbl := benchSubject(n)
			r := res(db, tbl, "amount")
			if d := e.Access(s, r, "select", t0); !d.Allowed {
				b.Fatalf("expected allow: %+v", d)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				e.Access(s, r, "select", t0)
			}
		})
	}
}

func BenchmarkMask(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("policies=%d", n), func(b *testing.B) {
			e, err := NewEngine(benchBundle(n), Options{})
			if err != nil {
				b.Fatal(err)
			}
			s, db, tbl := benchSubject(n)
			r := res(db, tbl, "ssn")
			if m := e.Mask(s, r, t0); m.Type != "MASK_SHOW_LAST_4" {
				b.Fatalf("expected a mask: %+v", m)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				e.Mask(s, r, t0)
			}
		})
	}
}

func BenchmarkRowFilter(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("policies=%d", n), func(b *testing.B) {
			e, err := NewEngine(benchBundle(n), Options{})
			if err != nil {
				b.Fatal(err)
			}
			s, db, tbl := benchSubject(n)
			r := res(db, tbl, "")
			if f := e.RowFilter(s, r, t0); len(f.Exprs) != 1 {
				b.Fatalf("expected a row filter: %+v", f)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				e.RowFilter(s, r, t0)
			}
		})
	}
}

func BenchmarkNewEngine(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("policies=%d", n), func(b *testing.B) {
			bundle := benchBundle(n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := NewEngine(bundle, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The benchmark bundle is what the benchmarks claim: each size has its
// policy count, and the benchmarked table has access, mask and row-filter
// policies while the wildcard policies are candidates for it.
func TestBenchBundle(t *testing.T) {
	for _, n := range benchSizes {
		b := benchBundle(n)
		if got := len(b.Policies.Policies); got != n {
			t.Errorf("size %d: %d policies", n, got)
		}
		e, err := NewEngine(b, Options{})
		if err != nil {
			t.Fatal(err)
		}
		s, db, tbl := benchSubject(n)
		if d := e.Access(s, res(db, tbl, "amount"), "select", t0); !d.Allowed {
			t.Errorf("size %d: access %+v", n, d)
		}
		if m := e.Mask(s, res(db, tbl, "ssn"), t0); m.Type != "MASK_SHOW_LAST_4" {
			t.Errorf("size %d: mask %+v", n, m)
		}
		if f := e.RowFilter(s, res(db, tbl, ""), t0); len(f.Exprs) != 1 {
			t.Errorf("size %d: filter %+v", n, f)
		}
		if d := e.Access(&Subject{User: "x", Groups: []string{"admins2"}}, res("db020", "t000", "c1"), "select", t0); n >= 1000 && !d.Allowed {
			t.Errorf("size %d: a wildcard policy should allow: %+v", n, d)
		}
	}
}

// BenchmarkAuditedAccess is the audit decision of one proxy record: with
// Ranger admin's default filter (DENIED only) for an allowed read, and
// with a resource filter that has to be matched.
func BenchmarkAuditedAccess(b *testing.B) {
	for _, c := range []struct{ name, filters string }{
		{"none", ""},
		{"denied-only", `[ {'accessResult': 'DENIED', 'isAudited': true} ]`},
		{"resource", `[ {'accessResult': 'DENIED', 'isAudited': true}, {'resources': {'database': {'values': ['temp']}, 'table': {'values': ['*']}, 'column': {'values': ['*']}}, 'isAudited': false} ]`},
	} {
		b.Run(c.name, func(b *testing.B) {
			sp := &ranger.ServicePolicies{ServiceName: "hive", ServiceConfig: ranger.StringMap{"ranger.plugin.audit.filters": c.filters},
				Policies: []ranger.RangerPolicy{{ID: 1, IsEnabled: true, IsAuditEnabled: true, Resources: map[string]ranger.RangerPolicyResource{
					"database": {Values: []string{"*"}}, "table": {Values: []string{"*"}}, "column": {Values: []string{"*"}}}}}}
			e, err := NewEngine(&ranger.Bundle{Policies: sp}, Options{})
			if err != nil {
				b.Fatal(err)
			}
			q := &Request{Subject: &Subject{User: "bob", Groups: []string{"analysts"}}, Hive: Resource{Database: "sales", Table: "orders"},
				Access: "select", Action: "SELECT", At: t0, Want: WantRecordAudit,
				Decided: Decided{Columns: []string{"id", "amount"}, PolicyIDs: [][]int64{{1}}}}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if !e.Evaluate(q).Audited {
					b.Fatal("not audited")
				}
			}
		})
	}
}
