package rangertest

import (
	"io"
	"net/http"
	"testing"

	"github.com/pgranger/pgranger/ranger/rangeradmin"
)

// The plain download paths: refused (400) as by Ranger 2.9+, and served
// without authentication once allowed, with the version parameter's 304.
func TestPlainDownloadPaths(t *testing.T) {
	s, err := New("svc", "u", "p")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetDocument(rangeradmin.DocPolicies, []byte(`{"serviceName":"svc","policyVersion":7,"policies":[]}`))
	get := func(path string) (int, string) {
		resp, err := http.Get(s.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/service/plugins/policies/download/svc"); code != http.StatusBadRequest {
		t.Errorf("plain path by default: %d, want 400", code)
	}
	s.AllowUnauthenticatedDownload(true)
	if code, body := get("/service/plugins/policies/download/svc?lastKnownVersion=-1"); code != http.StatusOK || body != `{"serviceName":"svc","policyVersion":7,"policies":[]}` {
		t.Errorf("allowed plain path: %d %s", code, body)
	}
	if code, _ := get("/service/plugins/policies/download/svc?lastKnownVersion=7"); code != http.StatusNotModified {
		t.Errorf("current version: %d, want 304", code)
	}
	if code, _ := get("/service/roles/download/other"); code != http.StatusNotFound {
		t.Errorf("unknown service on a plain path: %d, want 404", code)
	}
}
