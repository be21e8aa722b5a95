package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgranger/pgranger/authoring"
	"github.com/pgranger/pgranger/config"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/policystate"
	"github.com/pgranger/pgranger/ranger/rangeradmin"
	"github.com/pgranger/pgranger/ranger/rangertest"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func rangerConfig(url string) *config.Config {
	cfg := config.Default()
	cfg.Policy.Source = "ranger"
	cfg.Policy.ServiceName = "cm_hive"
	cfg.Policy.CacheTTLSecs = 5
	cfg.Policy.Ranger.URL = url
	cfg.Policy.Ranger.AdminUser = "pgranger"
	cfg.Policy.Ranger.AdminPassword = "pw-42"
	cfg.Policy.Ranger.TimeoutSecs = 1
	cfg.Policy.Ranger.PollIntervalMS = 100
	return cfg
}

func newTestHolder(cfg *config.Config, log *slog.Logger) *policystate.Holder {
	return policystate.New(policy.Options{}, time.Duration(cfg.Policy.CacheTTLSecs)*time.Second, log)
}

func TestRangerSourceWiring(t *testing.T) {
	srv, err := rangertest.New("cm_hive", "pgranger", "pw-42")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.SetDocument(rangeradmin.DocPolicies, []byte(`{"serviceName":"cm_hive","policyVersion":3,"policies":[]}`))
	var logs syncBuf
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	cfg := rangerConfig(srv.URL())
	cfg.Policy.Ranger.DownloadUserStore = false
	h := newTestHolder(cfg, log)
	src, err := startPolicySource(ctx, cfg, h, log)
	if err != nil {
		t.Fatal(err)
	}
	// Loaded before serve listens.
	if st := h.Snapshot(); st.Engine == nil || st.Unavailable != "" {
		t.Fatalf("after start: %+v\n%s", st, logs.String())
	}
	if srv.Requests(rangeradmin.DocUserStore) != 0 {
		t.Error("download-userstore = false still downloaded the user store")
	}
	rep, err := src.Refresh(ctx)
	if err != nil || rep.Error != "" || rep.Source != "ranger" || rep.Versions.Policies != 3 || rep.Versions.UserStore != -1 {
		t.Errorf("refresh: %v %+v", err, rep)
	}
	if snap := src.rangerStatus(); snap.ServiceName != "cm_hive" || len(snap.Documents) != 3 {
		t.Errorf("snapshot: %+v", snap)
	}
	if strings.Contains(logs.String(), "pw-42") {
		t.Errorf("password logged:\n%s", logs.String())
	}
}

// policy.source = "file" wired: loaded before serve listens, polled, a
// refresh reports the files' versions, a reload after a write reads the
// files whatever their modification time, and authoring writes the same
// files.
func TestFileSourceWiring(t *testing.T) {
	var logs syncBuf
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	path := filepath.Join(t.TempDir(), "hive.json")
	write := func(version int) {
		t.Helper()
		st, statErr := os.Stat(path)
		if err := os.WriteFile(path, []byte(fmt.Sprintf(`{"serviceName":"hive","policyVersion":%d,"policies":[]}`, version)), 0o644); err != nil {
			t.Fatal(err)
		}
		if statErr == nil { // as a write within one tick of the clock
			os.Chtimes(path, st.ModTime(), st.ModTime())
		}
	}
	write(3)
	cfg := config.Default()
	cfg.Policy.File.Policies = path
	cfg.Policy.File.PollIntervalMS = 3_600_000
	h := newTestHolder(cfg, log)
	src, err := startPolicySource(ctx, cfg, h, log)
	if err != nil {
		t.Fatal(err)
	}
	if st := h.Status(); !st.Available || st.Versions.Policies != 3 || src.kind != "file" || src.rangerStatus != nil {
		t.Fatalf("after start: %+v\n%s", st, logs.String())
	}
	if fs, ok := src.store.(authoring.FileStore); !ok || fs.Files.Paths().Policies != path {
		t.Errorf("authoring writes to %+v", src.store)
	}
	write(4)
	if rep, err := src.Refresh(ctx); err != nil || rep.Error != "" || rep.Source != "file" || rep.Versions.Policies != 3 {
		t.Errorf("refresh, files unchanged by size and time: %v %+v", err, rep)
	}
	if err := src.Reload(ctx); err != nil || h.Status().Versions.Policies != 4 {
		t.Errorf("reload: %v, version %d in force", err, h.Status().Versions.Policies)
	}
	os.WriteFile(path, []byte("{"), 0o644)
	if err := src.Reload(ctx); err == nil || h.Status().Versions.Policies != 4 || !strings.Contains(logs.String(), "policy files rejected") {
		t.Errorf("files that do not parse: %v, version %d in force", err, h.Status().Versions.Policies)
	}
}

func TestRangerSourceFailsClosedAndWarns(t *testing.T) {
	var logs syncBuf
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// Ranger refuses the credentials: nothing is loaded, statements are
	// denied, and the SQL-visible reason does not reveal the admin URL. (A
	// 401 is Ranger's answer, so the second URL, which only exists to be
	// warned about, is never contacted.)
	srv, err := rangertest.New("cm_hive", "pgranger", "another-password")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cfg := rangerConfig(srv.URL() + ",http://ranger.invalid:6080")
	cfg.Policy.Ranger.AcceptInvalidCerts = true
	h := newTestHolder(cfg, log)
	if _, err := startPolicySource(ctx, cfg, h, log); err != nil {
		t.Fatal(err)
	}
	st := h.Snapshot()
	if st.Engine != nil || !strings.Contains(st.Unavailable, "could not be downloaded from Ranger Admin") || strings.Contains(st.Unavailable, "127.0.0.1") {
		t.Errorf("unreachable Ranger: %+v", st)
	}
	for _, want := range []string{"accept-invalid-certs = true", "plain http to another host", "the first download from Ranger Admin failed"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}

	// A missing or empty password file stops the start, naming the key.
	cfg = rangerConfig("http://127.0.0.1:1")
	cfg.Policy.Ranger.AdminPassword = ""
	cfg.Policy.Ranger.AdminPasswordFile = filepath.Join(t.TempDir(), "nope")
	if _, err := startPolicySource(ctx, cfg, newTestHolder(cfg, log), log); err == nil || !strings.Contains(err.Error(), "policy.ranger.admin-password-file") {
		t.Errorf("missing password file: %v", err)
	}
	os.WriteFile(cfg.Policy.Ranger.AdminPasswordFile, []byte("\n"), 0o644)
	if _, err := startPolicySource(ctx, cfg, newTestHolder(cfg, log), log); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("empty password file: %v", err)
	}
	// A CA file that is not one stops it too.
	notPEM := cfg.Policy.Ranger.AdminPasswordFile
	cfg = rangerConfig("https://127.0.0.1:1")
	cfg.Policy.Ranger.CAFile = notPEM
	if _, err := startPolicySource(ctx, cfg, newTestHolder(cfg, log), log); err == nil || !strings.Contains(err.Error(), "ca-file") {
		t.Errorf("bad ca-file: %v", err)
	}
}

func TestServeRefusesBrokenRangerConfig(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "pgranger.toml")
	os.WriteFile(cfgPath, []byte(`
[[identity.users]]
name = "bob"
password = "bob"

[policy]
source = "ranger"

[policy.ranger]
url = "http://127.0.0.1:1"
admin-password-file = "missing"

[admin]
addr = ""

[audit]
path = ""
`), 0o644)
	var out, errOut strings.Builder
	if code := run([]string{"serve", "--config", cfgPath}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "policy.ranger.admin-password-file") {
		t.Errorf("serve with a missing password file: exit %d, %q", code, errOut.String())
	}
}
