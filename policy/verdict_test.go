package policy

import "testing"

func TestVerdict(t *testing.T) {
	for _, c := range []struct {
		d    Decision
		want string
	}{
		{Decision{Allowed: true, PolicyID: -1}, "allowed (super user)"},
		{Decision{Allowed: true, PolicyID: 3}, "allowed by policy 3"},
		{Decision{PolicyID: 7}, "denied by policy 7"},
		{Decision{}, "no policy grants update"},
	} {
		if got := c.d.Verdict("update"); got != c.want {
			t.Errorf("%+v: %q, want %q", c.d, got, c.want)
		}
	}
}
