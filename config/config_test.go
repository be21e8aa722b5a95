package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const minimal = `
[[identity.users]]
name = "bob"
password = "bob"

[policy.file]
policies = "policies/hive.json"
`

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pgranger.toml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaultsAndRelativePaths(t *testing.T) {
	p := write(t, minimal)
	c, err := Load(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen.Addr != "127.0.0.1:6432" || c.Backend.PoolSize != 20 || c.Policy.CacheTTLSecs != 30 || !c.Identity.Mode.Has("static") ||
		c.Listen.ShutdownTimeoutSecs != 5 {
		t.Errorf("defaults not applied: %+v", c)
	}
	if want := filepath.Join(filepath.Dir(p), "policies/hive.json"); c.Policy.File.Policies != want {
		t.Errorf("policies = %q, want %q (relative to the config file)", c.Policy.File.Policies, want)
	}
}

func TestEnvOverrides(t *testing.T) {
	c, err := Load(write(t, minimal), []string{
		"PGRANGER_LISTEN__ADDR=127.0.0.1:7000",
		"PGRANGER_BACKEND__POOL_SIZE=5",
		"PGRANGER_POLICY__RANGER__ADMIN_PASSWORD=s3cret",
		"PGRANGER_LISTEN__ALLOW_PLAINTEXT_PASSWORD=true",
		"UNRELATED=1",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen.Addr != "127.0.0.1:7000" || c.Backend.PoolSize != 5 || c.Policy.Ranger.AdminPassword != "s3cret" || !c.Listen.AllowPlaintextPassword {
		t.Errorf("overrides not applied: listen=%+v backend=%+v", c.Listen, c.Backend)
	}
}

func TestErrorsNameTheKey(t *testing.T) {
	cases := []struct {
		body, env, want string
	}{
		{minimal + "\n[listen]\naddr = \"nope\"\n", "", "listen.addr:"},
		{minimal, "PGRANGER_BACKEND__POOL_SIZE=0", "backend.pool-size:"},
		{minimal, "PGRANGER_BACKEND__POOL_SIZE=many", "backend.pool-size: want an integer"},
		{minimal, "PGRANGER_LISTEN__NO_SUCH=1", "listen.no-such: no such key"},
		{minimal, "PGRANGER_LISTEN__SHUTDOWN_TIMEOUT_SECS=-1", "listen.shutdown-timeout-secs: must be 0"},
		{minimal + "\n[policy]\nmask-precedence = \"random\"\n", "", "policy.mask-precedence:"},
		{minimal + "\n[policy]\nmask-dialect = \"trino\"\n", "", "policy.mask-dialect: unknown value \"trino\" (want hive or spark)"},
		{minimal + "\n[policy]\nnamespace-mapping = \"flat\"\n", "", "policy.namespace-mapping:"},
		{minimal + "\n[listen]\ntypo-key = 1\n", "", "unknown key listen.typo-key"},
		// The event loop's keys went with it: a file or variable still
		// setting them is refused, saying so.
		{minimal + "\n[listen]\nevent-loop = false\n", "", "listen.event-loop: removed: pgranger relays every session with two goroutines"},
		{minimal + "\n[listen]\nevent-loops = 2\n", "", "listen.event-loops: removed:"},
		{minimal, "PGRANGER_LISTEN__EVENT_LOOP=true", "PGRANGER_LISTEN__EVENT_LOOP: listen.event-loop: removed:"},
		{minimal, "PGRANGER_LISTEN__EVENT_LOOPS=1", "listen.event-loops: removed:"},
		{"[policy.file]\npolicies = \"x\"\n", "", "identity.users:"},
		{minimal + "\n[[identity.users]]\nname = \"bob\"\npassword = \"x\"\n", "", `identity.users[1].name: duplicate user "bob"`},
		{minimal + "\n[identity]\nmode = \"kerberos\"\n", "", `identity.mode: unknown mode "kerberos"`},
	}
	for _, c := range cases {
		var env []string
		if c.env != "" {
			env = []string{c.env}
		}
		_, err := Load(write(t, c.body), env)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error containing %q, got %v", c.want, err)
		}
	}
}

func TestModeAcceptsList(t *testing.T) {
	c, err := Load(write(t, "[identity]\nmode = [\"static\"]\n"+minimal), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Identity.Mode) != 1 || c.Identity.Mode[0] != "static" {
		t.Errorf("mode = %v", c.Identity.Mode)
	}
}
