package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgranger/pgranger/ranger/rangeradmin"
	"github.com/pgranger/pgranger/ranger/rangertest"
)

// End-to-end tests of policy.source = "ranger": the built binary and a real
// PostgreSQL, with policies downloaded from a Ranger-compatible test server
// (ranger/rangertest; a real Ranger Admin cannot run in CI). Intervals are
// short (poll 100–500 ms, TTL 2–3 s) so the file stays well under a minute.

const (
	rangerUser     = "pgranger"
	rangerPassword = "Ranger-Download-Pw-7731"
	rangerService  = "demo_hive"
	// bob's view of one order under the demo policies, and under the
	// tightened mask that tightenMask installs.
	ordersQuery  = "SELECT ssn FROM sales.orders WHERE id = $1"
	maskedSSN    = "xxx-xx-1111"
	tightenedSSN = "NULL"
)

// newRanger starts a test Ranger Admin serving the demo bundle.
func newRanger(t *testing.T) *rangertest.Server {
	t.Helper()
	requireCluster(t)
	srv, err := rangertest.New(rangerService, rangerUser, rangerPassword)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	srv.SetDocument(rangeradmin.DocPolicies, demoPolicies(t).bytes(t))
	return srv
}

// rangerProxy starts pgranger against srv; env adds or replaces settings.
func rangerProxy(t *testing.T, srv *rangertest.Server, env map[string]string) *proxy {
	t.Helper()
	o := proxyOptions{env: map[string]string{
		"PGRANGER_POLICY__SOURCE":                           "ranger",
		"PGRANGER_POLICY__RANGER__URL":                      srv.URL(),
		"PGRANGER_POLICY__RANGER__ADMIN_USER":               rangerUser,
		"PGRANGER_POLICY__RANGER__ADMIN_PASSWORD":           rangerPassword,
		"PGRANGER_POLICY__RANGER__POLL_INTERVAL_MS":         "200",
		"PGRANGER_POLICY__RANGER__TIMEOUT_SECS":             "1",
		"PGRANGER_POLICY__RANGER__BREAKER_MAX_BACKOFF_SECS": "1",
		"PGRANGER_POLICY__CACHE_TTL_SECS":                   "2",
	}}
	for k, v := range env {
		o.env[k] = v
	}
	p := startProxy(t, o)
	t.Cleanup(func() {
		if strings.Contains(p.log(), rangerPassword) {
			t.Errorf("the pgranger log contains the Ranger password:\n%s", p.log())
		}
	})
	return p
}

// tightenMask changes bob's mask on sales.orders.ssn to MASK_NULL in Ranger
// and returns the new policy version.
func tightenMask(t *testing.T, srv *rangertest.Server) int64 {
	t.Helper()
	v, err := srv.Edit(rangeradmin.DocPolicies, func(m map[string]any) {
		for _, p := range m["policies"].([]any) {
			pm := p.(map[string]any)
			if fmt.Sprint(pm["id"]) == "10" {
				items := pm["dataMaskPolicyItems"].([]any)
				items[1].(map[string]any)["dataMaskInfo"] = map[string]any{"dataMaskType": "MASK_NULL"}
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func ssnOf(conn *pgx.Conn) (string, error) {
	got, err := tryRows(conn, ordersQuery, 1)
	return strings.Join(got, ","), err
}

func wantSSN(t *testing.T, conn *pgx.Conn, want string) {
	t.Helper()
	got, err := ssnOf(conn)
	if err != nil || got != want {
		t.Fatalf("bob's ssn: %q, %v; want %q", got, err, want)
	}
}

// wantDenied checks that a governed statement is refused as "policies are
// unavailable" and that no row (so no raw value) came back, in both
// protocols.
func wantDenied(t *testing.T, conn *pgx.Conn, because string) {
	t.Helper()
	if msg := deniedProblem(conn, because); msg != "" {
		t.Fatal(msg)
	}
}

func deniedProblem(conn *pgx.Conn, because string) string {
	for _, args := range [][]any{{1}, {pgx.QueryExecModeSimpleProtocol, 1}} {
		got, err := tryRows(conn, ordersQuery, args...)
		if len(got) != 0 {
			return fmt.Sprintf("rows came back while policies are unavailable: %q", got)
		}
		if sqlstate(err) != "42501" || !strings.Contains(err.Error(), "policies are unavailable") || !strings.Contains(err.Error(), because) {
			return fmt.Sprintf("want 42501 policies are unavailable (%s), got %v", because, errString(err))
		}
	}
	return ""
}

func adminGet(t *testing.T, p *proxy, method, path string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+p.admin+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// metric returns the value of the series named exactly (with labels) in
// the proxy's /metrics, or "" when absent.
func metric(t *testing.T, p *proxy, series string) string {
	t.Helper()
	_, body := adminGet(t, p, "GET", "/metrics")
	for _, l := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			return v
		}
	}
	return ""
}

func TestRangerMasksAndNewVersionWithinOnePollInterval(t *testing.T) {
	srv := newRanger(t)
	const poll = 300 * time.Millisecond
	p := rangerProxy(t, srv, map[string]string{"PGRANGER_POLICY__RANGER__POLL_INTERVAL_MS": "300"})
	conn := connect(t, p, "bob")
	ctx := context.Background()

	// Masks from the downloaded bundle, through pgx's cached prepared
	// statement and an explicitly named one.
	wantSSN(t, conn, maskedSSN)
	if _, err := conn.Prepare(ctx, "orders_ssn", ordersQuery); err != nil {
		t.Fatal(err)
	}
	named := func() string {
		var s *string
		if err := conn.QueryRow(ctx, "orders_ssn", 1).Scan(&s); err != nil {
			return "error: " + err.Error()
		}
		if s == nil {
			return "NULL"
		}
		return *s
	}
	if got := named(); got != maskedSSN {
		t.Fatalf("named prepared statement: %s", got)
	}
	// The next polls send the version pgranger has (and get 304s).
	eventually(t, 2*time.Second, func() string {
		q := srv.LastQuery(rangeradmin.DocPolicies)
		if q.Get("lastKnownVersion") != "1" || q.Get("lastActivationTime") == "0" || q.Get("supportsPolicyDeltas") != "false" ||
			!strings.HasPrefix(q.Get("pluginId"), "pgranger@") || srv.LastUser(rangeradmin.DocPolicies) != rangerUser {
			return fmt.Sprintf("download parameters: %v, user %q", q, srv.LastUser(rangeradmin.DocPolicies))
		}
		return ""
	})
	if q := srv.LastQuery(rangeradmin.DocRoles); q.Get("lastKnownRoleVersion") != "1" {
		t.Errorf("roles parameters: %v", q)
	}
	if got := metric(t, p, "pgranger_policy_version"); got != "1" {
		t.Errorf("pgranger_policy_version = %q", got)
	}
	gen := metric(t, p, "pgranger_policy_generation")

	// A tightened mask in Ranger reaches the same connection and the same
	// prepared statements within one poll interval, with no restart.
	v := tightenMask(t, srv)
	changed := time.Now()
	for {
		got, err := ssnOf(conn)
		if err == nil && got == tightenedSSN {
			break
		}
		if time.Since(changed) > poll+250*time.Millisecond {
			t.Fatalf("still %q (%v) %s after the change; poll interval %s", got, err, time.Since(changed), poll)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("new version visible after %s (poll interval %s)", time.Since(changed).Round(time.Millisecond), poll)
	if got := named(); got != tightenedSSN {
		t.Errorf("named prepared statement after the version change: %s (must be prepared again before its Bind)", got)
	}
	wantSSN(t, connect(t, p, "bob"), tightenedSSN)
	if got := metric(t, p, "pgranger_policy_version"); got != strconv.FormatInt(v, 10) {
		t.Errorf("pgranger_policy_version = %q, want %d", got, v)
	}
	if got := metric(t, p, "pgranger_policy_generation"); got == gen {
		t.Errorf("generation unchanged (%s) after a new policy version", got)
	}
	for _, series := range []string{
		`pgranger_ranger_fetches_total{document="policies",status="200"}`,
		`pgranger_ranger_fetches_total{document="policies",status="304"}`,
		`pgranger_ranger_fetches_total{document="tags",status="304"}`,
		`pgranger_ranger_breaker_state{state="closed"}`,
	} {
		if got := metric(t, p, series); got == "" || got == "0" {
			t.Errorf("%s = %q", series, got)
		}
	}
}

func TestRangerRefreshEndpoint(t *testing.T) {
	t.Parallel()
	srv := newRanger(t)
	// A long poll interval: only POST /refresh can bring the change in time.
	p := rangerProxy(t, srv, map[string]string{
		"PGRANGER_POLICY__RANGER__POLL_INTERVAL_MS": "60000",
		"PGRANGER_POLICY__CACHE_TTL_SECS":           "120",
	})
	conn := connect(t, p, "bob")
	wantSSN(t, conn, maskedSSN)
	if code, body := adminGet(t, p, "GET", "/readyz"); code != 200 || !strings.Contains(body, "policyVersion 1 from ranger") {
		t.Errorf("readyz: %d %q", code, body)
	}
	if code, _ := adminGet(t, p, "GET", "/healthz"); code != 200 {
		t.Errorf("healthz: %d", code)
	}
	v := tightenMask(t, srv)
	code, body := adminGet(t, p, "POST", "/refresh")
	var rep struct {
		Versions map[string]int64 `json:"versions"`
		Results  map[string]struct{ Status string }
		InForce  map[string]int64 `json:"inForce"`
		Breaker  string
	}
	if err := json.Unmarshal([]byte(body), &rep); err != nil || code != 200 {
		t.Fatalf("POST /refresh: %d %s (%v)", code, body, err)
	}
	if rep.Versions["policies"] != v || rep.InForce["policyVersion"] != v || rep.Results["policies"].Status != "200" || rep.Results["roles"].Status != "304" || rep.Breaker != "closed" {
		t.Errorf("refresh report: %s", body)
	}
	// In force as soon as the refresh answered.
	wantSSN(t, conn, tightenedSSN)
	if code, _ := adminGet(t, p, "GET", "/refresh"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /refresh: %d", code)
	}
	srv.Stop()
	if code, body := adminGet(t, p, "POST", "/refresh"); code != http.StatusBadGateway || !strings.Contains(body, "transport_error") {
		t.Errorf("refresh with Ranger down: %d %s", code, body)
	}
}

func TestRangerStoppedMidRun(t *testing.T) {
	t.Parallel()
	srv := newRanger(t)
	p := rangerProxy(t, srv, nil) // poll 200 ms, TTL 2 s
	conn := connect(t, p, "bob")
	wantSSN(t, conn, maskedSSN)

	srv.Stop()
	stopped := time.Now()
	// Within the TTL a failing Ranger does not disturb queries.
	time.Sleep(600 * time.Millisecond)
	wantSSN(t, conn, maskedSSN)
	if time.Since(stopped) > 1500*time.Millisecond {
		t.Fatal("the within-TTL check ran too late to mean anything")
	}
	// Past it: denied, zero raw values, and not ready.
	eventually(t, 4*time.Second, func() string { return deniedProblem(conn, "more than policy.cache-ttl-secs=2") })
	if age := time.Since(stopped); age < 1800*time.Millisecond {
		t.Errorf("denied %s after Ranger stopped, before the 2 s TTL", age)
	}
	equalLines(t, "ungoverned statements still run", rows(t, conn, "SELECT 1"), []string{"1"})
	if code, body := adminGet(t, p, "GET", "/readyz"); code != 503 || !strings.Contains(body, "policies are unavailable") {
		t.Errorf("readyz past the TTL: %d %q", code, body)
	}
	if got := metric(t, p, `pgranger_policy_available{source="ranger"}`); got != "0" {
		t.Errorf("pgranger_policy_available = %q", got)
	}
	if !strings.Contains(p.log(), "download failed") || !strings.Contains(p.log(), "refused") {
		t.Errorf("the outage must be logged:\n%s", p.log())
	}

	// Ranger returns: enforcement resumes by itself (within the breaker's
	// backoff, capped at 1 s here).
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 4*time.Second, func() string {
		if got, err := ssnOf(conn); err != nil || got != maskedSSN {
			return fmt.Sprintf("after Ranger returned: %q %v", got, errString(err))
		}
		return ""
	})
	if code, _ := adminGet(t, p, "GET", "/readyz"); code != 200 {
		t.Errorf("readyz after recovery: %d", code)
	}
}

func TestRangerHangingNeverDelaysQueries(t *testing.T) {
	srv := newRanger(t)
	p := rangerProxy(t, srv, map[string]string{
		"PGRANGER_POLICY__RANGER__POLL_INTERVAL_MS": "100",
		"PGRANGER_POLICY__CACHE_TTL_SECS":           "30",
	})
	conn := connect(t, p, "bob")
	wantSSN(t, conn, maskedSSN)
	before := srv.TotalRequests()
	srv.Hang()
	defer srv.Release()
	// A refresh asked for now hangs too; queries must not care.
	go func() {
		req, _ := http.NewRequest("POST", "http://"+p.admin+"/refresh", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	var worst time.Duration
	n := 0
	for end := time.Now().Add(2500 * time.Millisecond); time.Now().Before(end); n++ {
		start := time.Now()
		wantSSN(t, conn, maskedSSN)
		if d := time.Since(start); d > worst {
			worst = d
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("%d queries while Ranger hung, slowest %s", n, worst)
	if worst > 300*time.Millisecond {
		t.Errorf("a query took %s while Ranger hung (the download timeout is 1 s)", worst)
	}
	if srv.TotalRequests() == before {
		t.Error("pgranger did not try Ranger while it hung")
	}
	if !strings.Contains(p.log(), "timed out") {
		t.Errorf("the hanging admin must be logged as a timeout:\n%s", p.log())
	}
}

func TestRangerWrongCredentials(t *testing.T) {
	t.Parallel()
	// Wrong password from the start: nothing is loaded, everything governed
	// is denied, and the log says what Ranger said (never the password).
	srv := newRanger(t)
	p := rangerProxy(t, srv, map[string]string{"PGRANGER_POLICY__RANGER__ADMIN_PASSWORD": "not-the-" + rangerPassword[:5]})
	conn := connect(t, p, "bob")
	wantDenied(t, conn, "no policy bundle has been loaded: policies could not be downloaded from Ranger Admin")
	equalLines(t, "ungoverned", rows(t, conn, "SELECT 1"), []string{"1"})
	if !strings.Contains(p.log(), "HTTP 401") || !strings.Contains(p.log(), "Authentication Failed") {
		t.Errorf("the 401 and Ranger's message must be logged:\n%s", p.log())
	}
	if strings.Contains(p.log(), "not-the-") {
		t.Errorf("the (wrong) password is in the log:\n%s", p.log())
	}
	if code, _ := adminGet(t, p, "GET", "/readyz"); code != 503 {
		t.Errorf("readyz without policies: %d", code)
	}

	// Credentials that stop working mid-run: fine within the TTL, denied
	// past it, fine again once Ranger accepts them.
	srv2 := newRanger(t)
	p2 := rangerProxy(t, srv2, nil)
	conn2 := connect(t, p2, "bob")
	wantSSN(t, conn2, maskedSSN)
	srv2.SetCredentials(rangerUser, "rotated-in-ranger-only")
	changed := time.Now()
	time.Sleep(500 * time.Millisecond)
	wantSSN(t, conn2, maskedSSN)
	eventually(t, 4*time.Second, func() string { return deniedProblem(conn2, "more than policy.cache-ttl-secs") })
	if time.Since(changed) < 1500*time.Millisecond {
		t.Error("denied before the TTL")
	}
	// 403: authenticated, but not in policy.download.auth.users.
	srv2.SetCredentials(rangerUser, rangerPassword)
	srv2.SetDownloadUsers("someone-else")
	eventually(t, 3*time.Second, func() string {
		if !strings.Contains(p2.log(), "policy.download.auth.users") {
			return "a 403 must name policy.download.auth.users in the log"
		}
		return ""
	})
	wantDenied(t, conn2, "more than policy.cache-ttl-secs")
	srv2.SetDownloadUsers(rangerUser)
	eventually(t, 4*time.Second, func() string {
		if got, err := ssnOf(conn2); err != nil || got != maskedSSN {
			return fmt.Sprintf("after the credentials work again: %q %v", got, errString(err))
		}
		return ""
	})
}

func TestRangerServiceNotFoundDeniesAtOnce(t *testing.T) {
	t.Parallel()
	srv := newRanger(t)
	p := rangerProxy(t, srv, map[string]string{"PGRANGER_POLICY__CACHE_TTL_SECS": "30"})
	conn := connect(t, p, "bob")
	wantSSN(t, conn, maskedSSN)
	srv.ServiceGone(true)
	gone := time.Now()
	// Not after the TTL (30 s): the policies are dropped on the 404.
	eventually(t, 2*time.Second, func() string { return deniedProblem(conn, `service "demo_hive" does not exist`) })
	t.Logf("denied %s after the service disappeared", time.Since(gone).Round(time.Millisecond))
	if got := metric(t, p, "pgranger_ranger_service_missing"); got != "1" {
		t.Errorf("pgranger_ranger_service_missing = %q", got)
	}
	if got := metric(t, p, "pgranger_policy_version"); got != "-1" {
		t.Errorf("pgranger_policy_version after the 404 = %q", got)
	}
	srv.ServiceGone(false)
	eventually(t, 3*time.Second, func() string {
		if got, err := ssnOf(conn); err != nil || got != maskedSSN {
			return fmt.Sprintf("after the service returned: %q %v", got, errString(err))
		}
		return ""
	})
}

func TestRangerGarbageJSONKeepsLastGoodThenDenies(t *testing.T) {
	t.Parallel()
	srv := newRanger(t)
	p := rangerProxy(t, srv, nil)
	conn := connect(t, p, "bob")
	wantSSN(t, conn, maskedSSN)
	srv.Garbage(rangeradmin.DocPolicies, true)
	time.Sleep(500 * time.Millisecond)
	wantSSN(t, conn, maskedSSN)
	eventually(t, 4*time.Second, func() string { return deniedProblem(conn, "more than policy.cache-ttl-secs") })
	if !strings.Contains(p.log(), "invalid_document") || !strings.Contains(p.log(), "not JSON") {
		t.Errorf("garbage must be logged as an invalid document:\n%s", p.log())
	}
	if got := metric(t, p, `pgranger_ranger_last_fetch{document="policies",status="invalid_document"}`); got != "1" {
		t.Errorf("last fetch metric = %q", got)
	}
	srv.Garbage(rangeradmin.DocPolicies, false)
	eventually(t, 4*time.Second, func() string {
		if got, err := ssnOf(conn); err != nil || got != maskedSSN {
			return fmt.Sprintf("after good JSON returned: %q %v", got, errString(err))
		}
		return ""
	})
}

func TestRangerRestartFromDiskCache(t *testing.T) {
	t.Parallel()
	srv := newRanger(t)
	cache := filepath.Join(t.TempDir(), "cache")
	env := map[string]string{"PGRANGER_POLICY__RANGER__CACHE_DIR": cache, "PGRANGER_POLICY__CACHE_TTL_SECS": "3"}
	a := rangerProxy(t, srv, env)
	connA := connect(t, a, "bob")
	wantSSN(t, connA, maskedSSN)
	if _, err := os.Stat(filepath.Join(cache, rangerService+".state.json")); err != nil {
		t.Fatalf("no disk cache written: %v", err)
	}
	srv.Stop()
	down := time.Now()
	// Open sessions would hold the shutdown for up to 5 s.
	connA.Close(context.Background())
	a.stop()

	// A restart while Ranger is down serves the cache within its TTL…
	b := rangerProxy(t, srv, env)
	conn := connect(t, b, "bob")
	wantSSN(t, conn, maskedSSN)
	if time.Since(down) > 2500*time.Millisecond {
		t.Fatalf("restart took %s: too slow for a 3 s TTL check", time.Since(down))
	}
	if !strings.Contains(b.log(), "policies loaded from the disk cache") {
		t.Errorf("the cached start must be logged:\n%s", b.log())
	}
	// …and denies past it: the age counts from Ranger's last confirmation
	// before the restart, not from when the cache was read.
	eventually(t, 5*time.Second, func() string { return deniedProblem(conn, "more than policy.cache-ttl-secs=3") })
	if age := time.Since(down); age < 2500*time.Millisecond {
		t.Errorf("denied %s after Ranger went down, before the TTL", age)
	}
	conn.Close(context.Background())
	b.stop()

	// A process started after the TTL, Ranger still down: denied at once.
	c := rangerProxy(t, srv, env)
	connC := connect(t, c, "bob")
	wantDenied(t, connC, "more than policy.cache-ttl-secs=3")

	// Ranger returns and confirms the cached versions (a 304 to the cached
	// version, not a fresh download).
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 4*time.Second, func() string {
		if got, err := ssnOf(connC); err != nil || got != maskedSSN {
			return fmt.Sprintf("after Ranger returned: %q %v", got, errString(err))
		}
		return ""
	})
	if q := srv.LastQuery(rangeradmin.DocPolicies); q.Get("lastKnownVersion") != "1" {
		t.Errorf("the cached version must be sent to Ranger: %v", q)
	}
}

func TestRangerThreeReplicasConverge(t *testing.T) {
	srv := newRanger(t)
	const poll = 500 * time.Millisecond
	env := map[string]string{"PGRANGER_POLICY__RANGER__POLL_INTERVAL_MS": "500", "PGRANGER_POLICY__CACHE_TTL_SECS": "5"}
	var proxies []*proxy
	var conns []*pgx.Conn
	for i := 0; i < 3; i++ {
		p := rangerProxy(t, srv, env)
		proxies = append(proxies, p)
		conns = append(conns, connect(t, p, "bob"))
		wantSSN(t, conns[i], maskedSSN)
	}
	v := tightenMask(t, srv)
	changed := time.Now()
	var wg sync.WaitGroup
	took := make([]time.Duration, 3)
	for i := range conns {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for time.Since(changed) < 3*poll {
				if got, err := ssnOf(conns[i]); err == nil && got == tightenedSSN {
					took[i] = time.Since(changed)
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
			took[i] = -1
		}(i)
	}
	wg.Wait()
	t.Logf("replicas saw version %d after %v (poll interval %s)", v, took, poll)
	for i, d := range took {
		if d < 0 || d > poll+250*time.Millisecond {
			t.Errorf("replica %d: %v to converge, want within one poll interval (%s)", i, d, poll)
		}
		if got := metric(t, proxies[i], "pgranger_policy_version"); got != strconv.FormatInt(v, 10) {
			t.Errorf("replica %d reports pgranger_policy_version %q, want %d", i, got, v)
		}
	}
}

func TestRangerUnreachableAtStartDenies(t *testing.T) {
	t.Parallel()
	srv := newRanger(t)
	srv.Stop()
	p := rangerProxy(t, srv, nil) // no disk cache
	conn := connect(t, p, "bob")
	wantDenied(t, conn, "no policy bundle has been loaded")
	if !strings.Contains(p.log(), "the first download from Ranger Admin failed") {
		t.Errorf("the failed first download must be logged:\n%s", p.log())
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 4*time.Second, func() string {
		if got, err := ssnOf(conn); err != nil || got != maskedSSN {
			return fmt.Sprintf("after Ranger came up: %q %v", got, errString(err))
		}
		return ""
	})
}

func TestRangerRejectedBundleKeepsLastGoodThenDenies(t *testing.T) {
	t.Parallel()
	srv := newRanger(t)
	p := rangerProxy(t, srv, nil)
	conn := connect(t, p, "bob")
	wantSSN(t, conn, maskedSSN)
	// JSON that parses but cannot be enforced: a delta answer (pgranger
	// asks for none), which applied as a bundle would drop every policy.
	srv.SetDocument(rangeradmin.DocPolicies, []byte(`{"serviceName":"demo_hive","policyVersion":7,"policyDeltas":[{"id":1,"changeType":2,"policiesVersion":7}]}`))
	time.Sleep(500 * time.Millisecond)
	wantSSN(t, conn, maskedSSN)
	eventually(t, 4*time.Second, func() string { return deniedProblem(conn, "more than policy.cache-ttl-secs") })
	if !strings.Contains(p.log(), "rejected") || !strings.Contains(p.log(), "policy deltas") {
		t.Errorf("the rejected bundle must be logged:\n%s", p.log())
	}
	// Ranger publishes a fixed version.
	fixed := demoPolicies(t)
	fixed["policyVersion"] = 8
	srv.SetDocument(rangeradmin.DocPolicies, fixed.bytes(t))
	eventually(t, 4*time.Second, func() string {
		if got, err := ssnOf(conn); err != nil || got != maskedSSN {
			return fmt.Sprintf("after an enforceable bundle returned: %q %v", got, errString(err))
		}
		return ""
	})
}
