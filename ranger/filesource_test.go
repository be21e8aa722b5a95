package ranger

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestFileSource(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hive.json")
	write := func(s string) {
		t.Helper()
		// A new mtime for every write, even within one clock tick.
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		next := time.Now().Add(time.Duration(len(s)) * time.Millisecond)
		os.Chtimes(path, next, next)
	}
	write(`{"serviceName": "hive", "policyVersion": 1, "policies": []}`)
	src := NewFileSource(FilePaths{Policies: path})

	b, err := src.Check()
	if err != nil || b == nil || b.Policies.PolicyVersion != 1 {
		t.Fatalf("first load: %v %v", b, err)
	}
	first, _ := src.Status()
	if b, err := src.Check(); b != nil || err != nil {
		t.Errorf("unchanged files: %v %v", b, err)
	}
	if again, _ := src.Status(); !again.After(first) && !again.Equal(first) {
		t.Error("an unchanged good file renews its freshness")
	}

	write("not json")
	before, _ := src.Status()
	if _, err := src.Check(); err == nil {
		t.Fatal("a file that does not parse must be an error")
	}
	if after, lastErr := src.Status(); !after.Equal(before) || lastErr == nil {
		t.Errorf("a failed check must not renew freshness (%v → %v, %v)", before, after, lastErr)
	}

	write(`{"serviceName": "hive", "policyVersion": 2, "policies": [{"id": 1, "name": "p", "resources": {}}]}`)
	b, err = src.Check()
	if err != nil || b == nil || b.Policies.PolicyVersion != 2 || len(b.Policies.Policies) != 1 {
		t.Fatalf("reload: %+v %v", b, err)
	}

	os.Remove(path)
	if _, err := src.Check(); err == nil {
		t.Error("a missing file is an error")
	}
}
