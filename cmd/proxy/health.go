package main

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// backendProbe answers "does the backend accept connections as the
// service role?" for /readyz: it connects (startup and authentication,
// nothing more) and closes. Answers are reused for a second, so a busy
// load balancer does not open a connection per probe.
type backendProbe struct {
	dsn string
	log *slog.Logger

	mu      sync.Mutex
	checked time.Time
	err     error
	ok      bool
	known   bool
}

const probeEvery = time.Second

// errBackendUnreachable is what /readyz says; the driver's error (host,
// user, the server's message) goes to the log only.
var errBackendUnreachable = errors.New("pgranger cannot connect to backend.dsn as the service role; see the log")

func (p *backendProbe) check(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.known && time.Since(p.checked) < probeEvery {
		return p.err
	}
	err := func() error {
		c, err := pgconn.Connect(ctx, p.dsn)
		if err != nil {
			return err
		}
		return c.Close(ctx)
	}()
	ok := err == nil
	if !p.known || ok != p.ok {
		if ok {
			p.log.Info("backend reachable")
		} else {
			p.log.Warn("backend unreachable: /readyz answers 503", "err", err)
		}
	}
	p.known, p.ok, p.checked = true, ok, time.Now()
	p.err = nil
	if !ok {
		p.err = errBackendUnreachable
	}
	return p.err
}
