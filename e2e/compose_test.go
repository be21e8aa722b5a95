package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Docker cannot run where CI runs, so the compose file is checked for what
// can be checked: it parses, names its services, and mounts files that exist.
func TestComposeFileIsValid(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Services map[string]struct {
			Image   string   `yaml:"image"`
			Build   any      `yaml:"build"`
			Volumes []string `yaml:"volumes"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	for _, name := range []string{"postgres", "pgranger"} {
		svc, ok := doc.Services[name]
		if !ok {
			t.Fatalf("service %q missing", name)
		}
		if svc.Image == "" && svc.Build == nil {
			t.Errorf("service %q has neither image nor build", name)
		}
		for _, v := range svc.Volumes {
			src, _, _ := strings.Cut(v, ":")
			if _, err := os.Stat(filepath.Join(repoRoot, src)); err != nil {
				t.Errorf("service %q mounts %s, which does not exist", name, src)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(repoRoot, "Dockerfile")); err != nil {
		t.Error("pgranger is built from the Dockerfile, which is missing")
	}
}
