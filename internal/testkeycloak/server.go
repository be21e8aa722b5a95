package testkeycloak

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options for Start.
type Options struct {
	// Realms are realm representations (JSON) to import, as
	// data/import/*.json is imported by `kc.sh start-dev --import-realm`.
	Realms [][]byte
	// StartTimeout bounds the start up to the first realm answering
	// (default 5 minutes: a cold first start also builds Quarkus, and the
	// machine may be busy with other tests).
	StartTimeout time.Duration
}

// Server is a running Keycloak.
type Server struct {
	// URL is the base URL and host name, http://127.0.0.1:<port>: every
	// token's "iss" is URL + "/realms/<realm>" (--hostname pins it).
	URL string
	// Started is how long the start took, from exec to the first realm's
	// discovery document.
	Started time.Duration

	home          string
	cmd           *exec.Cmd
	log           *os.File
	done          chan struct{}
	adminPassword string

	mu         sync.Mutex
	stopped    bool
	adminTok   string
	adminExp   time.Time
	httpClient *http.Client
}

// AdminUser is the bootstrap administrator of the master realm.
const AdminUser = "pgranger-test-admin"

// Start fetches the distribution when needed and starts Keycloak in dev
// mode on a free loopback port with the realms imported. It returns once
// the first realm serves its discovery document.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if len(opts.Realms) == 0 {
		return nil, fmt.Errorf("testkeycloak: no realm to import")
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 5 * time.Minute
	}
	dist, err := Dist(ctx)
	if err != nil {
		return nil, err
	}
	var first struct {
		Realm string `json:"realm"`
	}
	if err := json.Unmarshal(opts.Realms[0], &first); err != nil || first.Realm == "" {
		return nil, fmt.Errorf("testkeycloak: the first realm is not a realm representation (no \"realm\"): %v", err)
	}
	// One start at a time per distribution: the first one writes the
	// Quarkus build into the shared lib/ (the lock is held until Keycloak
	// answers, which is after that build).
	unlock, err := lock(filepath.Join(filepath.Dir(dist), "start.lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()

	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		s, err := start(ctx, dist, first.Realm, opts)
		if err == nil {
			return s, nil
		}
		lastErr = err
		if !strings.Contains(err.Error(), "Port(s) already bound") && !strings.Contains(err.Error(), "Address already in use") {
			break
		}
	}
	return nil, lastErr
}

func start(ctx context.Context, dist, realm string, opts Options) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	// A home of its own: bin/ copied (kc.sh takes its home from its own
	// resolved path), the rest linked, and data/ private, so the imports
	// and H2's files of this server are its own.
	home, err := os.MkdirTemp("", "pgranger-keycloak-")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Server, error) {
		os.RemoveAll(home)
		return nil, err
	}
	if err := copyDir(filepath.Join(dist, "bin"), filepath.Join(home, "bin")); err != nil {
		return fail(err)
	}
	for _, d := range []string{"lib", "conf", "themes", "providers"} {
		if err := os.Symlink(filepath.Join(dist, d), filepath.Join(home, d)); err != nil {
			return fail(err)
		}
	}
	imp := filepath.Join(home, "data", "import")
	if err := os.MkdirAll(imp, 0o755); err != nil {
		return fail(err)
	}
	for i, r := range opts.Realms {
		if err := os.WriteFile(filepath.Join(imp, fmt.Sprintf("realm-%d.json", i)), r, 0o644); err != nil {
			return fail(err)
		}
	}
	logf, err := os.Create(filepath.Join(home, "keycloak.log"))
	if err != nil {
		return fail(err)
	}
	pw := randomHex(16)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(filepath.Join(home, "bin", "kc.sh"), "start-dev",
		"--http-host=127.0.0.1", "--http-port="+strconv.Itoa(port), "--db=dev-mem",
		"--import-realm", "--hostname="+base, "--health-enabled=false")
	cmd.Dir = home
	cmd.Env = append(os.Environ(),
		"KC_BOOTSTRAP_ADMIN_USERNAME="+AdminUser,
		"KC_BOOTSTRAP_ADMIN_PASSWORD="+pw,
		// Keycloak's default heap is a share of the machine's memory;
		// 24 GiB shared with other work needs a bound.
		"JAVA_OPTS_KC_HEAP=-Xms64m -Xmx768m",
	)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group: kc.sh execs java, and Stop ends the group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fail(fmt.Errorf("testkeycloak: start kc.sh: %w", err))
	}
	s := &Server{URL: base, home: home, cmd: cmd, log: logf, done: make(chan struct{}), adminPassword: pw,
		httpClient: &http.Client{Timeout: 30 * time.Second}}
	go func() {
		cmd.Wait()
		close(s.done)
	}()
	deadline := time.Now().Add(opts.StartTimeout)
	probe := &http.Client{Timeout: 5 * time.Second}
	for {
		select {
		case <-s.done:
			out := s.Log()
			s.Stop()
			return nil, fmt.Errorf("testkeycloak: Keycloak %s exited during start (%v); its log ends with:\n%s", Version, cmd.ProcessState, tail([]byte(out), 6000))
		case <-ctx.Done():
			s.Stop()
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
		resp, err := probe.Get(s.Issuer(realm) + "/.well-known/openid-configuration")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				s.Started = time.Since(t0)
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			out := s.Log()
			s.Stop()
			return nil, fmt.Errorf("testkeycloak: Keycloak %s did not serve realm %q within %v; its log ends with:\n%s", Version, realm, opts.StartTimeout, tail([]byte(out), 6000))
		}
	}
}

// Issuer is the "iss" of realm's tokens.
func (s *Server) Issuer(realm string) string { return s.URL + "/realms/" + realm }

// JWKSURL is realm's key set.
func (s *Server) JWKSURL(realm string) string {
	return s.Issuer(realm) + "/protocol/openid-connect/certs"
}

// Log is what Keycloak printed so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.home, "keycloak.log"))
	return string(b)
}

// Stop ends the Keycloak process group and removes its home. It is safe
// to call more than once.
func (s *Server) Stop() {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.stopped = true
	s.mu.Unlock()
	if s.cmd.Process != nil {
		pgid := s.cmd.Process.Pid
		syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			syscall.Kill(-pgid, syscall.SIGKILL)
			<-s.done
		}
	}
	s.log.Close()
	os.RemoveAll(s.home)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func copyDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		s, d := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		if e.IsDir() {
			if err := copyDir(s, d); err != nil {
				return err
			}
			continue
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(s)
		if err != nil {
			return err
		}
		if err := os.WriteFile(d, data, info.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// postForm posts a form and decodes a JSON answer into out; a status
// other than 200 is an error carrying Keycloak's answer.
func (s *Server) postForm(ctx context.Context, url string, form map[string]string, out any) error {
	var body bytes.Buffer
	first := true
	for k, v := range form {
		if !first {
			body.WriteByte('&')
		}
		first = false
		body.WriteString(urlEscape(k) + "=" + urlEscape(v))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, &body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return s.do(req, http.StatusOK, out)
}
