package rangerexpr

import "testing"

// A typical script condition and a typical row-filter expression.
const (
	benchScript = "IS_IN_GROUP('test-group1') && USER.state == 'CA' && !HAS_TAG('SECRET')"
	benchFilter = "GET_UG_ATTR_Q('dept')"
)

func BenchmarkCondition(b *testing.B) {
	p, err := ParseScript(benchScript)
	if err != nil {
		b.Fatal(err)
	}
	env := condEnv()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if ok, err := p.Condition(env); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

func BenchmarkParseScript(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := ParseScript(benchScript); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFilterExpr(b *testing.B) {
	env := condEnv()
	env.Request = nil
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Eval(benchFilter, env); err != nil {
			b.Fatal(err)
		}
	}
}
