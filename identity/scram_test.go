package identity

import (
	"encoding/base64"
	"errors"
	"fmt"
	"testing"

	"github.com/xdg-go/scram"

	"github.com/pgranger/pgranger/config"
)

// login runs a full client/server SCRAM exchange the way libpq does (empty
// user name inside SCRAM, the real one in the startup message).
func login(t *testing.T, a *Authenticator, startupUser, password string) (*Identity, error) {
	t.Helper()
	client, err := scram.SHA256.NewClient("", password, "")
	if err != nil {
		t.Fatal(err)
	}
	cc := client.NewConversation()
	conv, err := a.BeginSCRAM(startupUser)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := cc.Step("")
	if err != nil {
		t.Fatal(err)
	}
	for !conv.Done() {
		reply, err := conv.Step([]byte(msg))
		if err != nil {
			return nil, err
		}
		if msg, err = cc.Step(string(reply)); err != nil {
			if conv.Done() {
				break
			}
			return nil, err
		}
	}
	return conv.Identity()
}

func TestStaticSCRAM(t *testing.T) {
	// The verifier PostgreSQL stores for password "carol" (generated with
	// a fixed salt; any verifier in this form is accepted).
	carolVerifier := verifierFor(t, "carol")
	a, err := New(config.Identity{Users: []config.User{
		{Name: "bob", Password: "bob", Roles: []string{"b", "a"}, Groups: []string{"analysts"}, Attributes: map[string]string{"region": "US"}},
		{Name: "carol", Password: carolVerifier},
	}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := login(t, a, "bob", "bob")
	if err != nil {
		t.Fatalf("bob with the right password: %v", err)
	}
	if id.User != "bob" || id.Roles[0] != "a" || id.Groups[0] != "analysts" || id.Attributes["region"] != "US" {
		t.Errorf("identity = %+v", id)
	}
	if _, err := login(t, a, "carol", "carol"); err != nil {
		t.Errorf("carol with a stored verifier: %v", err)
	}
	for _, c := range []struct{ user, pw string }{{"bob", "wrong"}, {"nobody", "bob"}, {"carol", "bob"}} {
		if _, err := login(t, a, c.user, c.pw); !errors.Is(err, ErrAuthFailed) {
			t.Errorf("%s/%s: err = %v, want ErrAuthFailed", c.user, c.pw, err)
		}
	}
}

func TestMalformedVerifier(t *testing.T) {
	_, err := New(config.Identity{Users: []config.User{{Name: "x", Password: "SCRAM-SHA-256$4096:zz$bad"}}})
	if err == nil {
		t.Fatal("a malformed verifier must be rejected")
	}
}

func verifierFor(t *testing.T, password string) string {
	t.Helper()
	salt := "0123456789abcdef"
	client, _ := scram.SHA256.NewClient("", password, "")
	creds, err := client.GetStoredCredentialsWithError(scram.KeyFactors{Salt: salt, Iters: 4096})
	if err != nil {
		panic(err)
	}
	return "SCRAM-SHA-256$4096:" + b64(salt) + "$" + b64(string(creds.StoredKey)) + ":" + b64(string(creds.ServerKey))
}
func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// After a reload, a session's identity is Current only while its user's
// entry is unchanged; removal, a new password and new roles, groups or
// attributes are told apart. Token logins are not static entries.
func TestStandingAfterReload(t *testing.T) {
	users := func(bobPassword string, bobRoles []string, bobAttrs map[string]string, withCarol bool) config.Identity {
		cfg := config.Identity{Users: []config.User{
			{Name: "bob", Password: bobPassword, Roles: bobRoles, Groups: []string{"analysts"}, Attributes: bobAttrs},
			{Name: "dave", Password: "dave"},
		}}
		if withCarol {
			cfg.Users = append(cfg.Users, config.User{Name: "carol", Password: "carol"})
		}
		return cfg
	}
	a, err := New(users("bob", []string{"b", "a"}, map[string]string{"region": "US"}, true))
	if err != nil {
		t.Fatal(err)
	}
	logins := map[string]*Identity{}
	for _, u := range []string{"bob", "carol", "dave"} {
		if logins[u], err = login(t, a, u, u); err != nil {
			t.Fatal(err)
		}
	}
	standings := func() string {
		return fmt.Sprint(a.Standing(logins["bob"]), a.Standing(logins["carol"]), a.Standing(logins["dave"]))
	}
	for _, c := range []struct {
		name string
		cfg  config.Identity
		want string // bob carol dave
	}{
		{"the same users, roles in another order", users("bob", []string{"a", "b"}, map[string]string{"region": "US"}, true), "0 0 0"},
		{"carol removed", users("bob", []string{"a", "b"}, map[string]string{"region": "US"}, false), "0 1 0"},
		{"bob's attributes changed", users("bob", []string{"a", "b"}, map[string]string{"region": "EU"}, false), "3 1 0"},
		{"bob's roles changed", users("bob", []string{"a"}, map[string]string{"region": "US"}, false), "3 1 0"},
		{"bob's password changed", users("bob2", []string{"a", "b"}, map[string]string{"region": "US"}, false), "2 1 0"},
		{"back to the first entries", users("bob", []string{"a", "b"}, map[string]string{"region": "US"}, true), "0 0 0"},
	} {
		if err := a.Reload(c.cfg); err != nil {
			t.Fatal(err)
		}
		if got := standings(); got != c.want {
			t.Errorf("%s: standings (bob carol dave) = %s, want %s", c.name, got, c.want)
		}
	}
	if _, err := login(t, a, "dave", "dave"); err != nil {
		t.Errorf("dave, unchanged through every reload, can still log in: %v", err)
	}
	if got := a.Standing(&Identity{User: "bob", Method: MethodJWT}); got != Current {
		t.Errorf("a token identity: %v, want Current", got)
	}
}
