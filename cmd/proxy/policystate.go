package main

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/sqlrewrite"
)

// policyHolder turns bundles from a source into policy engines and answers
// the per-statement question "which engine, and can it be trusted?"
// without locks: the engine and its generation sit behind one atomic
// pointer, and staleness is a time comparison.
type policyHolder struct {
	opts   policy.Options
	ttl    time.Duration
	status func() (time.Time, error) // the source's last success and error
	log    *slog.Logger

	cur atomic.Pointer[loadedEngine]
	gen atomic.Uint64
}

type loadedEngine struct {
	engine     *policy.Engine
	generation uint64
}

// install builds an engine from b; a bundle the engine rejects counts as a
// failed load (the previous engine stays, and ages toward the TTL).
func (h *policyHolder) install(b *ranger.Bundle) error {
	eng, err := policy.NewEngine(b, h.opts)
	if err != nil {
		return err
	}
	le := &loadedEngine{engine: eng, generation: h.gen.Add(1)}
	h.cur.Store(le)
	h.log.Info("policies loaded", "service", eng.ServiceName(), "policyVersion", eng.PolicyVersion(), "generation", le.generation)
	return nil
}

// PolicyState implements pgwire.PolicyProvider.
func (h *policyHolder) PolicyState() sqlrewrite.PolicyState {
	le := h.cur.Load()
	if le == nil {
		_, err := h.status()
		reason := "no policy bundle has been loaded"
		if err != nil {
			reason = "no policy bundle has been loaded: " + err.Error()
		}
		return sqlrewrite.PolicyState{Unavailable: reason}
	}
	st := sqlrewrite.PolicyState{Engine: le.engine, Generation: le.generation}
	last, _ := h.status()
	if age := time.Since(last); age > h.ttl {
		st.Unavailable = fmt.Sprintf("the last successful policy load was %s ago, more than policy.cache-ttl-secs=%d", age.Round(time.Second), int(h.ttl/time.Second))
	}
	return st
}
