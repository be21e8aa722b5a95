// Package admin serves pgranger's admin HTTP endpoint (admin.addr):
//
//	GET  /metrics   Prometheus metrics (client_golang)
//	GET  /healthz   the process is up
//	GET  /readyz    policies are loaded and fresh and the backend accepts
//	                connections (200), or why not (503)
//	POST /refresh   fetch policies now; answers with what the source got
//	                and what is in force after it (RefreshReport)
//
// It is reachable from loopback only unless admin.allow-remote is set. With
// a bearer token (admin.token-file, PGRANGER_ADMIN__TOKEN), /metrics and
// POST /refresh need "Authorization: Bearer <token>"; /healthz and /readyz
// stay open for load balancers and orchestrators. It serves HTTPS with
// admin.tls-cert and admin.tls-key.
package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pgranger/pgranger/metrics"
	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/ranger/rangeradmin"
)

// PolicyStatus is the state of the policies in force, as /readyz and the
// policy metrics report it.
type PolicyStatus = metrics.PolicyStatus

// RefreshFunc fetches policies now: ranger.Source's Refresh. The error
// is set only when no round ran.
type RefreshFunc func(ctx context.Context) (ranger.Report, error)

// RefreshReport is POST /refresh's answer: the source's report of the
// round, and the policies in force after it.
type RefreshReport struct {
	ranger.Report
	Available  bool          `json:"available"`
	Generation uint64        `json:"generation"`
	InForce    InForceReport `json:"inForce"`
}

// InForceReport are the versions of the documents in force (-1: none).
type InForceReport struct {
	PolicyVersion    int64 `json:"policyVersion"`
	TagVersion       int64 `json:"tagVersion"`
	RoleVersion      int64 `json:"roleVersion"`
	UserStoreVersion int64 `json:"userStoreVersion"`
}

// Options configure the admin server.
type Options struct {
	Addr        string
	AllowRemote bool // serve clients that are not on loopback
	Log         *slog.Logger
	Policy      func() PolicyStatus             // required
	Ranger      func() rangeradmin.SourceStatus // nil unless policy.source = "ranger"
	Refresh     RefreshFunc                     // nil: POST /refresh answers 501
	// RefreshTimeout bounds POST /refresh (default 30 s).
	RefreshTimeout time.Duration
	// Collectors are registered next to pgranger's own.
	Collectors []prometheus.Collector
	// Token returns the bearer token /metrics and POST /refresh require
	// ("" or nil: none). It is asked per request, so a reload applies.
	Token func() string
	// TLS, when set, makes the endpoint HTTPS.
	TLS *tls.Config
	// Backend, when set, is part of /readyz: nil when the backend
	// accepts connections, else why not.
	Backend func(ctx context.Context) error
	// Draining, when set and true, makes /readyz answer 503: a graceful
	// shutdown has begun and new connections are refused.
	Draining func() bool
}

// Server is a running admin endpoint.
type Server struct {
	ln  net.Listener
	srv *http.Server
}

// Start listens on opts.Addr and serves until ctx ends.
func Start(ctx context.Context, opts Options) (*Server, error) {
	h, err := NewHandler(opts)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, err
	}
	if opts.TLS != nil {
		ln = tls.NewListener(ln, opts.TLS)
	}
	s := &Server{ln: ln, srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	go s.srv.Serve(ln)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s.srv.Shutdown(sctx)
	}()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// NewHandler builds the admin handler and its metrics registry.
func NewHandler(opts Options) (http.Handler, error) {
	if opts.Policy == nil {
		return nil, errors.New("admin: no policy status")
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.RefreshTimeout <= 0 {
		opts.RefreshTimeout = 30 * time.Second
	}
	reg := prometheus.NewRegistry()
	cs := append([]prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		metrics.NewPolicyCollector(opts.Policy, opts.Ranger),
	}, opts.Collectors...)
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("admin: metrics: %w", err)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", bearer(opts.Token, promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slogErrorLog{opts.Log}})))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		st := opts.Policy()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if opts.Draining != nil && opts.Draining() {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "not ready: pgranger is shutting down")
			return
		}
		if !st.Available {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "not ready: policies are unavailable (%s)\n", st.Reason)
			return
		}
		if opts.Backend != nil {
			ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
			err := opts.Backend(ctx)
			cancel()
			if err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprintf(w, "not ready: the backend is unreachable (%v)\n", err)
				return
			}
		}
		fmt.Fprintf(w, "ready: policyVersion %d from %s, confirmed %s ago\n", st.PolicyVersion, st.Source, time.Since(st.LastSuccess).Round(time.Millisecond))
	})
	mux.Handle("POST /refresh", bearer(opts.Token, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if opts.Refresh == nil {
			http.Error(w, "this policy source cannot be refreshed on demand", http.StatusNotImplemented)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), opts.RefreshTimeout)
		defer cancel()
		rep, err := opts.Refresh(ctx)
		if err != nil {
			http.Error(w, "refresh: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		st := opts.Policy()
		report := RefreshReport{Report: rep, Available: st.Available, Generation: st.Generation,
			InForce: InForceReport{PolicyVersion: st.PolicyVersion, TagVersion: st.TagVersion, RoleVersion: st.RoleVersion, UserStoreVersion: st.UserStoreVersion}}
		w.Header().Set("Content-Type", "application/json")
		if rep.Error != "" || !st.Available {
			// The round ran but Ranger (or the files) did not deliver, or
			// what is in force cannot be used.
			w.WriteHeader(http.StatusBadGateway)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(report)
	})))
	var h http.Handler = mux
	if !opts.AllowRemote {
		h = loopbackOnly(mux)
	}
	return h, nil
}

// bearer requires "Authorization: Bearer <token>" when token() is not "".
// The comparison is in constant time over digests, so neither the token's
// bytes nor its length leak through timing.
func bearer(token func() string, next http.Handler) http.Handler {
	if token == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		want := token()
		if want == "" {
			next.ServeHTTP(w, r)
			return
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
		if !ok || subtle.ConstantTimeCompare(a[:], b[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="pgranger admin"`)
			http.Error(w, "a bearer token is required (admin.token-file)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackOnly refuses clients that are not on this machine, whatever
// address the server was bound to.
func loopbackOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			http.Error(w, "the admin endpoint serves loopback clients only (admin.allow-remote)", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

type slogErrorLog struct{ log *slog.Logger }

func (l slogErrorLog) Println(v ...any) { l.log.Error("admin: metrics", "err", fmt.Sprint(v...)) }
