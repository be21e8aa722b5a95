package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pgranger/pgranger/config"
)

func TestChangedKeys(t *testing.T) {
	a, b := config.Default(), config.Default()
	b.Backend.PoolSize = 7
	b.Identity.Users = []config.User{{Name: "dave"}}
	b.Identity.JWT.AttributeClaims = map[string]string{"region": "region"}
	b.Policy.Ranger.AdminPassword = "new secret"
	got := strings.Join(changedKeys(a, b), " ")
	if want := "backend.pool-size identity.jwt.attribute-claims identity.users policy.ranger.admin-password"; got != want {
		t.Errorf("changed keys = %q, want %q", got, want)
	}
	if got := changedKeys(a, config.Default()); len(got) != 0 {
		t.Errorf("no change reported as %v", got)
	}
}

func TestUserChanges(t *testing.T) {
	before := []config.User{{Name: "alice", Password: "a"}, {Name: "bob", Password: "b"}, {Name: "carol"}}
	after := []config.User{{Name: "alice", Password: "a"}, {Name: "bob", Password: "b2"}, {Name: "dave"}}
	if got := userChanges(before, after); got != "~bob -carol +dave" {
		t.Errorf("userChanges = %q", got)
	}
	if got := userChanges(before, before); got != "unchanged" {
		t.Errorf("userChanges of the same set = %q", got)
	}
}

func TestHealthcheckCommand(t *testing.T) {
	code := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(code)
		w.Write([]byte("ready: policyVersion 1\n"))
	}))
	defer srv.Close()
	var out, errb bytes.Buffer
	if rc := run([]string{"healthcheck", "--url", srv.URL + "/readyz"}, &out, &errb); rc != 0 || out.String() != "200 ready: policyVersion 1\n" {
		t.Errorf("ready: rc %d, out %q, err %q", rc, out.String(), errb.String())
	}
	code = http.StatusServiceUnavailable
	out.Reset()
	if rc := run([]string{"healthcheck", "--url", srv.URL + "/readyz"}, &out, &errb); rc != 1 {
		t.Errorf("not ready: rc %d", rc)
	}
}
