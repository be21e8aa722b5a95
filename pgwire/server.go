// Package pgwire is pgranger's PostgreSQL protocol front end: it accepts
// clients, authenticates them through package identity, relays their
// messages to a pooled backend connection, and has every statement
// rewritten by package sqlrewrite on the way (at Query and at Parse).
//
// Each session runs two goroutines in the style of a forwarder: the client
// loop reads client messages, rewrites, and writes to the backend; the
// backend loop reads backend messages and writes to the client. They meet
// only in the session's pending queue, which records what every forwarded
// message will be answered with, so the backend loop knows which replies
// belong to pgranger's own injected messages and which error replaces a
// denial. Each loop blocks only itself: a client that does not read stalls
// its own backend loop, which stops reading the backend, so PostgreSQL
// waits and nothing piles up in pgranger; a statement that waits for a
// catalog reload stalls its own client loop. Sockets are read and written
// with raw system calls on the runtime's poller (rawio.go).
//
// This is the one relay. An epoll event loop serving many sessions per
// goroutine was the default for a while and was removed: it saved 10–15 %
// of proxy CPU per transaction at the same throughput, for ~1,000 lines of
// hand-overs and spills whose bugs showed only under load
// (docs/history/performance.md, "The event loop (removed)").
package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pgranger/pgranger/audit"
	"github.com/pgranger/pgranger/catalog"
	"github.com/pgranger/pgranger/config"
	"github.com/pgranger/pgranger/identity"
	"github.com/pgranger/pgranger/sqlrewrite"
	"github.com/pgranger/pgranger/sqlstate"
)

// Options wire a Server to the rest of pgranger.
type Options struct {
	Config   *config.Config
	Auth     *identity.Authenticator
	Rewriter *sqlrewrite.Rewriter
	Policies sqlrewrite.PolicySource
	Audit    *audit.Logger // nil = no audit
	// Author answers authoring statements (authoring.go); nil: authoring
	// is off and they are refused.
	Author Author
	Log    *slog.Logger
	// TLS for clients; when nil, Serve loads listen.tls-cert/tls-key (if
	// set) from Config.
	TLS *tls.Config
}

// Server accepts client connections.
type Server struct {
	opts Options
	cfg  *config.Config
	log  *slog.Logger

	mu       sync.Mutex // guards pools, catalogs, listener, closed
	pools    map[string]*backendPool
	catalogs map[string]*catalog.Catalog
	ln       net.Listener
	closed   bool

	sessions sync.Map // cancel key (uint64) → *session
	clients  atomic.Int64
	wg       sync.WaitGroup

	// draining: Shutdown has begun; sessions end as soon as they are idle.
	draining atomic.Bool
	// stopStartups ends the context of connections still in startup
	// (waiting for a backend connection, verifying a token).
	stopStartups context.CancelFunc

	obs serverObs // metrics, client certificate (stats.go, tlsreload.go)
}

// NewServer creates a server; call Serve to accept clients.
func NewServer(opts Options) *Server {
	log := opts.Log
	if log == nil {
		log = slog.Default()
	}
	return &Server{opts: opts, cfg: opts.Config, log: log, pools: map[string]*backendPool{}, catalogs: map[string]*catalog.Catalog{}}
}

// Serve accepts connections on ln until Close or ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.opts.TLS == nil && s.cfg.Listen.TLSCert != "" {
		t, err := LoadTLS(s.cfg.Listen.TLSCert, s.cfg.Listen.TLSKey)
		if err != nil {
			return fmt.Errorf("listen.tls-cert: %w", err)
		}
		s.opts.TLS = s.obs.reloadableTLS(t)
	}
	if s.opts.TLS == nil && s.cfg.Listen.RequireTLS {
		return errors.New("listen.require-tls: needs listen.tls-cert and listen.tls-key")
	}
	// Not cancelled when Serve returns: a graceful shutdown closes the
	// listener first and lets connections in startup go on until its
	// deadline (Shutdown), or Close ends them.
	ctx, stopStartups := context.WithCancel(ctx)
	s.mu.Lock()
	s.ln = ln
	s.stopStartups = stopStartups
	s.mu.Unlock()
	go func() {
		<-ctx.Done()
		if !s.draining.Load() {
			s.Close()
		}
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed || s.draining.Load() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return err
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.handle(ctx, c)
		}()
	}
}

// Close stops accepting, closes idle backend connections and catalogs.
// Sessions in progress end when their clients leave.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	if s.ln != nil {
		s.ln.Close()
	}
	if s.stopStartups != nil {
		s.stopStartups()
	}
	pools, cats := s.pools, s.catalogs
	s.mu.Unlock()
	for _, p := range pools {
		p.closeIdle()
	}
	for _, c := range cats {
		c.Close()
	}
}

// Wait blocks until every session has ended.
func (s *Server) Wait() { s.wg.Wait() }

// Draining reports whether Shutdown has begun (/readyz answers 503).
func (s *Server) Draining() bool { return s.draining.Load() }

// Shutdown drains the server (SIGTERM). It stops accepting connections
// (new ones are refused, so a load balancer sends them elsewhere), ends
// every session that is idle outside a transaction block with FATAL 57P01
// "terminating connection due to administrator command", as PostgreSQL
// does, and every other session as soon as it gets there: a running
// statement finishes and its results reach the client, an open transaction
// block may commit or roll back. When ctx ends, the sessions left are ended
// with the same error and their statements are cancelled on the backend.
// Shutdown returns when every connection is done (the last ones are reset
// or closed, a few seconds at most), after closing the backend pools and
// catalogs.
func (s *Server) Shutdown(ctx context.Context) {
	s.mu.Lock()
	s.draining.Store(true)
	if s.ln != nil {
		s.ln.Close()
	}
	stopStartups := s.stopStartups
	s.mu.Unlock()
	s.sessions.Range(func(_, v any) bool {
		v.(*session).drain()
		return true
	})
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		n := 0
		s.sessions.Range(func(_, v any) bool {
			v.(*session).end(shutdownFatal(), "session ended: the shutdown deadline passed (listen.shutdown-timeout-secs)")
			n++
			return true
		})
		if stopStartups != nil {
			stopStartups()
		}
		s.log.Info("shutdown deadline passed: the remaining sessions were ended and their statements cancelled", "sessions", n)
		<-done
	}
	s.Close()
}

// errShuttingDown refuses a connection whose startup ends during a
// graceful shutdown.
var errShuttingDown = errors.New("server is shutting down")

// database returns the pool and catalog for a database, creating them on
// first use.
func (s *Server) database(ctx context.Context, name string) (*backendPool, *catalog.Catalog, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.draining.Load() {
		return nil, nil, errShuttingDown
	}
	pool, ok := s.pools[name]
	if !ok {
		b := s.cfg.Backend
		var err error
		pool, err = newBackendPool(b.DSN, name, b.PoolSize, time.Duration(b.ConnectTimeoutSecs)*time.Second,
			time.Duration(b.AcquireTimeoutSecs)*time.Second)
		if err != nil {
			return nil, nil, err
		}
		pool.allowSuperuser = b.AllowSuperuser
		s.pools[name] = pool
	}
	cat, ok := s.catalogs[name]
	if !ok {
		cctx, cancel := context.WithTimeout(ctx, time.Duration(s.cfg.Backend.ConnectTimeoutSecs)*time.Second)
		defer cancel()
		var err error
		var copts catalog.Options
		if s.opts.Rewriter != nil && s.cfg.Catalog.StoredMasks {
			// Stored masks are verified against this rewriter's masks.
			copts.StoredMasks = s.opts.Rewriter.StoredMaskBuilder()
		}
		cat, err = catalog.OpenWith(cctx, s.cfg.Backend.DSN, name, time.Duration(s.cfg.Catalog.TTLSecs)*time.Second, copts)
		if err != nil {
			return nil, nil, err
		}
		snap := cat.Current()
		if snap.ServerEncoding != "UTF8" {
			cat.Close()
			return nil, nil, fmt.Errorf("database %q has server_encoding %s; pgranger needs UTF8", name, snap.ServerEncoding)
		}
		s.catalogs[name] = cat
	}
	return pool, cat, nil
}

// newCancelKey makes the BackendKeyData pgranger hands out: its own, so a
// client never learns (or can cancel with) a backend's real key.
func (s *Server) newCancelKey(sess *session) (uint32, uint32) {
	for {
		var b [8]byte
		rand.Read(b[:])
		pid := binary.BigEndian.Uint32(b[:4]) & 0x7fffffff
		secret := binary.BigEndian.Uint32(b[4:])
		key := uint64(pid)<<32 | uint64(secret)
		if _, taken := s.sessions.LoadOrStore(key, sess); !taken {
			sess.cancelKey = key
			return pid, secret
		}
	}
}

// EndStaleSessions ends, with FATAL 28000, every open session whose
// static user the configuration no longer has as the session logged in:
// removed, with another password, or with other roles, groups or
// attributes (identity.Authenticator.Standing). Call it after the new
// users are in (Authenticator.Reload). A session whose identity changed
// is ended rather than given the new identity: what it created under the
// old one — open cursors and portals, SQL-prepared statements, temporary
// views — would go on serving the old access. Sessions end at their next
// statement boundary (session.revoke). It returns the users whose
// sessions end, with the count of each.
func (s *Server) EndStaleSessions() map[string]int {
	ended := map[string]int{}
	s.sessions.Range(func(_, v any) bool {
		sess := v.(*session)
		if !sess.life.isLive() {
			return true // it checks itself when it starts (session.run)
		}
		if fe, logMsg := s.staleIdentity(sess.id); fe != nil {
			ended[sess.id.User]++
			sess.revoke(fe, logMsg)
		}
		return true
	})
	return ended
}

// staleIdentity is the error that ends a session of id, nil while the
// configuration still holds id's user as it was at login.
func (s *Server) staleIdentity(id *identity.Identity) (*fatalError, string) {
	switch s.opts.Auth.Standing(id) {
	case identity.Removed:
		return fatalf(sqlstate.InvalidAuthorization, "pgranger: user %q was removed from the configuration; the session is closed", id.User),
			"session ended: the user was removed from the configuration"
	case identity.PasswordChanged:
		return fatalf(sqlstate.InvalidAuthorization, "pgranger: the password of user %q was changed in the configuration; log in again", id.User),
			"session ended: the user's password was changed in the configuration"
	case identity.IdentityChanged:
		return fatalf(sqlstate.InvalidAuthorization, "pgranger: the roles, groups or attributes of user %q were changed in the configuration; log in again to use them", id.User),
			"session ended: the user's roles, groups or attributes were changed in the configuration"
	}
	return nil, ""
}

func (s *Server) cancel(pid, secret uint32) {
	if v, ok := s.sessions.Load(uint64(pid)<<32 | uint64(secret)); ok {
		v.(*session).cancelBackend()
	}
}
