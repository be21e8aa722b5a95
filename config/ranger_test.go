package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const rangerMinimal = `
[[identity.users]]
name = "bob"
password = "bob"

[policy]
source = "ranger"

[policy.ranger]
url = "https://ranger-a.example:6182, https://ranger-b.example:6182/"
admin-user = "pgranger"
`

func TestRangerSourceDefaultsAndPaths(t *testing.T) {
	body := rangerMinimal + `admin-password-file = "secrets/ranger"
ca-file = "tls/ca.pem"
client-cert = "tls/c.pem"
client-key = "tls/c.key"
cache-dir = "cache"
poll-interval-ms = 250
`
	p := write(t, body)
	c, err := Load(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := c.Policy.Ranger
	if got := r.URLs(); len(got) != 2 || got[0] != "https://ranger-a.example:6182" || got[1] != "https://ranger-b.example:6182/" {
		t.Errorf("URLs() = %q", got)
	}
	if !r.DownloadTags || !r.DownloadRoles || !r.DownloadUserStore || r.BreakerFailures != 3 || r.BreakerMaxBackoffSecs != 300 || r.TimeoutSecs != 5 {
		t.Errorf("defaults not applied: %+v", r)
	}
	if r.PollInterval() != 250*time.Millisecond {
		t.Errorf("poll-interval-ms must replace poll-interval-secs: %s", r.PollInterval())
	}
	dir := filepath.Dir(p)
	for key, got := range map[string]string{"admin-password-file": r.AdminPasswordFile, "ca-file": r.CAFile, "client-cert": r.ClientCert, "client-key": r.ClientKey, "cache-dir": r.CacheDir} {
		if !strings.HasPrefix(got, dir) {
			t.Errorf("%s = %q, want it relative to the config file", key, got)
		}
	}
	r.PollIntervalMS = 0
	if r.PollInterval() != 10*time.Second {
		t.Errorf("default poll interval = %s", r.PollInterval())
	}
}

func TestRangerPasswordOnlyFromEnvOrFile(t *testing.T) {
	env := []string{"PGRANGER_POLICY__RANGER__ADMIN_PASSWORD=from-env"}
	c, err := Load(write(t, rangerMinimal), env)
	if err != nil {
		t.Fatal(err)
	}
	if c.Policy.Ranger.AdminPassword != "from-env" {
		t.Errorf("password from the environment not applied")
	}
	// A literal password in the file is refused, and the message does not
	// repeat it.
	_, err = Load(write(t, rangerMinimal+"admin-password = \"hunter2\"\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "policy.ranger.admin-password: a password written in the config file is refused") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("literal password: %v", err)
	}
	// An empty one (as in the documented template) is fine.
	if _, err := Load(write(t, rangerMinimal+"admin-password = \"\"\n"), env); err != nil {
		t.Errorf("empty admin-password in the file: %v", err)
	}
}

func TestRangerValidationNamesTheKey(t *testing.T) {
	pw := "PGRANGER_POLICY__RANGER__ADMIN_PASSWORD=x"
	cases := []struct{ body, env, want string }{
		{rangerMinimal, "", "policy.ranger.admin-password: no password"},
		{rangerMinimal + "admin-password-file = \"f\"\n", pw, "policy.ranger.admin-password-file: set either"},
		{strings.Replace(rangerMinimal, "https://ranger-a.example:6182, ", "ftp://x, ", 1), pw, `policy.ranger.url: "ftp://x": must be an http`},
		{strings.Replace(rangerMinimal, "https://ranger-a.example:6182, ", "https://admin:secret@x, ", 1), pw, "policy.ranger.url: \"https://admin:xxxxx@x\": must not carry credentials"},
		{strings.Replace(rangerMinimal, "https://ranger-a.example:6182, ", "https://x/?a=1, ", 1), pw, "policy.ranger.url: \"https://x/?a=1\": must be a base URL"},
		{strings.Replace(rangerMinimal, `url = "https://ranger-a.example:6182, https://ranger-b.example:6182/"`, `url = " , "`, 1), pw, "policy.ranger.url: must name at least one"},
		{strings.Replace(rangerMinimal, `admin-user = "pgranger"`, `admin-user = ""`, 1), pw, "policy.ranger.admin-user: must be set"},
		{rangerMinimal + "timeout-secs = 0\n", pw, "policy.ranger.timeout-secs:"},
		{rangerMinimal + "poll-interval-ms = -1\n", pw, "policy.ranger.poll-interval-ms:"},
		{rangerMinimal + "client-cert = \"c.pem\"\n", pw, "policy.ranger.client-cert: client-cert and client-key"},
		{rangerMinimal + "breaker-failures = 0\n", pw, "policy.ranger.breaker-failures:"},
		{rangerMinimal + "breaker-max-backoff-secs = 0\n", pw, "policy.ranger.breaker-max-backoff-secs:"},
		{rangerMinimal + "poll-interval-secs = 30\n", pw, "policy.cache-ttl-secs: 30 s is not longer than the Ranger poll interval"},
		{rangerMinimal + "no-such = 1\n", pw, "unknown key policy.ranger.no-such"},
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

func TestAdminAddrLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:9432", "[::1]:9432", "localhost:9432", "127.0.0.2:1"} {
		if _, err := Load(write(t, minimal+"\n[admin]\naddr = \""+addr+"\"\n"), nil); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
	for _, addr := range []string{":9432", "0.0.0.0:9432", "10.1.2.3:9432", "admin.example:9432"} {
		_, err := Load(write(t, minimal+"\n[admin]\naddr = \""+addr+"\"\n"), nil)
		if err == nil || !strings.Contains(err.Error(), "admin.addr:") || !strings.Contains(err.Error(), "admin.allow-remote") {
			t.Errorf("%s: want a loopback error naming admin.allow-remote, got %v", addr, err)
		}
		if _, err := Load(write(t, minimal+"\n[admin]\naddr = \""+addr+"\"\nallow-remote = true\n"), []string{"PGRANGER_ADMIN__TOKEN=t0ken"}); err != nil {
			t.Errorf("%s with allow-remote and a token: %v", addr, err)
		}
		_, err = Load(write(t, minimal+"\n[admin]\naddr = \""+addr+"\"\nallow-remote = true\n"), nil)
		if err == nil || err.Error() != "admin.allow-remote: a remotely reachable admin endpoint needs a bearer token: set PGRANGER_ADMIN__TOKEN or admin.token-file" {
			t.Errorf("%s with allow-remote and no token: %v", addr, err)
		}
	}
}

func TestAdminTokenAndTLS(t *testing.T) {
	path := write(t, minimal+"\n[admin]\ntoken = \"s3cret\"\n")
	_, err := Load(path, nil)
	if err == nil || err.Error() != path+": admin.token: a token written in the config file is refused; set PGRANGER_ADMIN__TOKEN or admin.token-file" {
		t.Errorf("token in the file: %v", err)
	}
	c, err := Load(write(t, minimal+"\n[admin]\ntoken-file = \"token\"\ntls-cert = \"a.pem\"\ntls-key = \"a.key\"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(c.Admin.TokenFile) != "token" || !filepath.IsAbs(c.Admin.TokenFile) || !filepath.IsAbs(c.Admin.TLSCert) {
		t.Errorf("paths not resolved: %+v", c.Admin)
	}
	_, err = Load(write(t, minimal+"\n[admin]\ntls-cert = \"a.pem\"\n"), nil)
	if err == nil || err.Error() != "admin.tls-cert: tls-cert and tls-key must be set together" {
		t.Errorf("cert without key: %v", err)
	}
	_, err = Load(write(t, minimal+"\n[admin]\ntoken-file = \"t\"\n"), []string{"PGRANGER_ADMIN__TOKEN=x"})
	if err == nil || err.Error() != "admin.token-file: set either PGRANGER_ADMIN__TOKEN or admin.token-file, not both" {
		t.Errorf("both token sources: %v", err)
	}
	_, err = Load(write(t, minimal+"\n[audit]\nbuffer-size = 0\n"), nil)
	if err == nil || err.Error() != "audit.buffer-size: must be greater than 0, got 0" {
		t.Errorf("buffer-size 0: %v", err)
	}
}
