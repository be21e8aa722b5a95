package ranger

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadFiles(t *testing.T) {
	dir := t.TempDir()
	paths := FilePaths{Policies: filepath.Join(dir, "hive.json"), Tags: filepath.Join(dir, "tags.json")}
	os.WriteFile(paths.Policies, []byte(`{"serviceName": "hive", "policyVersion": 2, "policies": [{"id": 1, "name": "p", "resources": {}}]}`), 0o644)
	os.WriteFile(paths.Tags, []byte(`{"serviceName": "hive", "tagVersion": 5}`), 0o644)
	b, err := LoadFiles(paths)
	if err != nil || b.Policies.PolicyVersion != 2 || len(b.Policies.Policies) != 1 || b.Tags.TagVersion != 5 || b.Roles != nil {
		t.Fatalf("load: %+v %v", b, err)
	}
	if v := b.Versions(); v != (Versions{Policies: 2, Tags: 5, Roles: -1, UserStore: -1}) {
		t.Errorf("versions: %+v", v)
	}

	// One document that does not parse fails the whole bundle, naming the file.
	os.WriteFile(paths.Tags, []byte("not json"), 0o644)
	if b, err := LoadFiles(paths); b != nil || err == nil || !strings.Contains(err.Error(), "tags.json") {
		t.Errorf("a tag file that does not parse: %v %v", b, err)
	}
	os.Remove(paths.Policies)
	if _, err := LoadFiles(paths); err == nil {
		t.Error("a missing file is an error")
	}
}
