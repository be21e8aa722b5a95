package admin

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/ranger/rangeradmin"
)

func get(t *testing.T, h http.Handler, method, path string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	req.RemoteAddr = "127.0.0.1:5555"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

func TestEndpoints(t *testing.T) {
	st := PolicyStatus{Source: "ranger", Available: true, Generation: 3, PolicyVersion: 12, TagVersion: 4, RoleVersion: -1, UserStoreVersion: 2,
		LastSuccess: time.Now().Add(-1500 * time.Millisecond), TTL: 30 * time.Second}
	rs := rangeradmin.SourceStatus{
		ServiceName: "cm_hive",
		Documents: []rangeradmin.DocumentStatus{
			{Document: rangeradmin.DocPolicies, Version: 12, LastSuccess: time.Unix(1700000000, 0), LastStatus: "304", Fetches: map[string]uint64{"200": 1, "304": 7, "401": 2}},
			{Document: rangeradmin.DocTags, Version: 4, LastStatus: rangeradmin.StatusTransportError, Fetches: map[string]uint64{"transport_error": 1}},
		},
		Breaker: rangeradmin.BreakerStatus{State: rangeradmin.BreakerOpen, ConsecutiveFailures: 4},
	}
	refreshed := 0
	h, err := NewHandler(Options{
		Policy: func() PolicyStatus { return st },
		Ranger: func() rangeradmin.SourceStatus { return rs },
		Refresh: func(ctx context.Context) (ranger.Report, error) {
			refreshed++
			rep := ranger.Report{Source: "ranger", Versions: ranger.Versions{Policies: 12, Tags: 4, Roles: -1, UserStore: 2}, Breaker: "closed"}
			if refreshed > 1 {
				rep.Error = "roles: HTTP 500"
			}
			return rep, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, h, "GET", "/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("healthz: %d %q", code, body)
	}
	if code, body := get(t, h, "GET", "/readyz"); code != 200 || !strings.Contains(body, "policyVersion 12 from ranger") {
		t.Errorf("readyz: %d %q", code, body)
	}
	code, body := get(t, h, "GET", "/metrics")
	if code != 200 {
		t.Fatalf("metrics: %d", code)
	}
	for _, want := range []string{
		`pgranger_policy_available{source="ranger"} 1`,
		"pgranger_policy_version 12",
		"pgranger_tag_version 4",
		"pgranger_role_version -1",
		"pgranger_userstore_version 2",
		"pgranger_policy_generation 3",
		"pgranger_policy_cache_ttl_seconds 30",
		`pgranger_ranger_fetches_total{document="policies",status="304"} 7`,
		`pgranger_ranger_fetches_total{document="policies",status="401"} 2`,
		`pgranger_ranger_fetches_total{document="tags",status="transport_error"} 1`,
		`pgranger_ranger_last_fetch{document="tags",status="transport_error"} 1`,
		`pgranger_ranger_last_success_timestamp_seconds{document="policies"} 1.7e+09`,
		`pgranger_ranger_last_success_timestamp_seconds{document="tags"} 0`,
		`pgranger_ranger_document_version{document="tags"} 4`,
		`pgranger_ranger_breaker_state{state="open"} 1`,
		`pgranger_ranger_breaker_state{state="closed"} 0`,
		"pgranger_ranger_consecutive_failures 4",
		"pgranger_ranger_service_missing 0",
		"# HELP pgranger_policy_age_seconds Seconds since the source last confirmed",
		"go_goroutines",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if !strings.Contains(body, "pgranger_policy_age_seconds 1.5") {
		t.Errorf("age: %s", grep(body, "pgranger_policy_age_seconds "))
	}

	code, body = get(t, h, "POST", "/refresh")
	var rep RefreshReport
	if err := json.Unmarshal([]byte(body), &rep); err != nil || code != 200 || rep.Versions.Policies != 12 || rep.Source != "ranger" ||
		!rep.Available || rep.Generation != 3 || rep.InForce.TagVersion != 4 || rep.Breaker != "closed" || !strings.Contains(body, `"error": ""`) {
		t.Errorf("refresh: %d %q %v", code, body, err)
	}
	if code, _ := get(t, h, "POST", "/refresh"); code != http.StatusBadGateway {
		t.Errorf("a refresh that did not get everything: %d, want 502", code)
	}
	if code, _ := get(t, h, "GET", "/refresh"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /refresh: %d", code)
	}
	if code, _ := get(t, h, "GET", "/nope"); code != 404 {
		t.Errorf("unknown path: %d", code)
	}

	// Stale or never loaded: not ready, and the reason is given.
	st = PolicyStatus{Source: "ranger", Reason: "the last successful policy load was 40s ago", PolicyVersion: -1, TagVersion: -1, RoleVersion: -1, UserStoreVersion: -1, TTL: 30 * time.Second}
	if code, body := get(t, h, "GET", "/readyz"); code != 503 || !strings.Contains(body, "40s ago") {
		t.Errorf("readyz when stale: %d %q", code, body)
	}
	_, body = get(t, h, "GET", "/metrics")
	for _, want := range []string{`pgranger_policy_available{source="ranger"} 0`, "pgranger_policy_age_seconds +Inf", "pgranger_policy_version -1"} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics when unavailable lack %q", want)
		}
	}
}

// A graceful shutdown takes the proxy out of a load balancer's rotation
// while its sessions drain.
func TestReadyzWhileDraining(t *testing.T) {
	draining := false
	h, err := NewHandler(Options{
		Policy:   func() PolicyStatus { return PolicyStatus{Source: "file", Available: true} },
		Draining: func() bool { return draining },
	})
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := get(t, h, "GET", "/readyz"); code != 200 {
		t.Errorf("readyz before the shutdown: %d", code)
	}
	draining = true
	if code, body := get(t, h, "GET", "/readyz"); code != 503 || body != "not ready: pgranger is shutting down\n" {
		t.Errorf("readyz while draining: %d %q", code, body)
	}
	if code, body := get(t, h, "GET", "/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("healthz while draining: %d %q", code, body)
	}
}

func grep(body, prefix string) string {
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return "(none)"
}

func TestLoopbackOnlyAndFileSource(t *testing.T) {
	h, err := NewHandler(Options{Policy: func() PolicyStatus { return PolicyStatus{Source: "file", Available: true} }})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.RemoteAddr = "10.1.2.3:4444"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Errorf("a remote client: %d, want 403", rec.Code)
	}
	if code, _ := get(t, h, "POST", "/refresh"); code != http.StatusNotImplemented {
		t.Errorf("refresh without a refresh func: %d", code)
	}
	_, body := get(t, h, "GET", "/metrics")
	if strings.Contains(body, "pgranger_ranger_") {
		t.Error("Ranger metrics without a Ranger source")
	}
	h, _ = NewHandler(Options{AllowRemote: true, Policy: func() PolicyStatus { return PolicyStatus{} }})
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Errorf("a remote client with allow-remote: %d", rec.Code)
	}
}

func TestStartServesAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := Start(ctx, Options{Addr: "127.0.0.1:0", Policy: func() PolicyStatus { return PolicyStatus{Available: true} }})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + srv.Addr() + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	resp.Body.Close()
	if _, err := Start(ctx, Options{Addr: srv.Addr(), Policy: func() PolicyStatus { return PolicyStatus{} }}); err == nil {
		t.Error("a busy address must be an error")
	}
	cancel()
	deadline := time.Now().Add(3 * time.Second)
	for {
		if _, err := http.Get("http://" + srv.Addr() + "/healthz"); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("still serving after ctx ended")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
