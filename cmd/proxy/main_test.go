package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCLI(t *testing.T) {
	var out, errOut strings.Builder
	if code := run([]string{"version"}, &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), "pgranger ") {
		t.Errorf("version: %d %q", code, out.String())
	}
	out.Reset()
	if code := run(nil, &out, &errOut); code != 2 {
		t.Errorf("no command: exit %d, want 2", code)
	}
	if code := run([]string{"frobnicate"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), `unknown command "frobnicate"`) {
		t.Errorf("unknown command: %d %q", code, errOut.String())
	}
	errOut.Reset()
	if code := run([]string{"serve"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "--config") {
		t.Errorf("serve without --config: %d %q", code, errOut.String())
	}
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("[listen]\naddr = \"nope\"\n"), 0o644)
	errOut.Reset()
	if code := run([]string{"serve", "--config", bad}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "listen.addr:") {
		t.Errorf("bad config: exit %d, stderr %q", code, errOut.String())
	}
}
