package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pgranger/pgranger/admin"
	"github.com/pgranger/pgranger/config"
	"github.com/pgranger/pgranger/metrics"
	"github.com/pgranger/pgranger/policy"
	"github.com/pgranger/pgranger/policystate"
	"github.com/pgranger/pgranger/ranger"
)

// adminOptions are the parts of the admin endpoint serve builds.
type adminOptions struct {
	token     func() string
	backend   func(ctx context.Context) error
	collector prometheus.Collector
	draining  func() bool
}

// startAdmin serves admin.addr (nil, nil when it is "").
func startAdmin(ctx context.Context, cfg *config.Config, holder *policystate.Holder, src *policySource, log *slog.Logger, ao adminOptions) (*admin.Server, error) {
	if cfg.Admin.Addr == "" {
		return nil, nil
	}
	var tlsConf *tls.Config
	if cfg.Admin.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.Admin.TLSCert, cfg.Admin.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("admin.tls-cert: %w", err)
		}
		tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	var collectors []prometheus.Collector
	if ao.collector != nil {
		collectors = append(collectors, ao.collector)
	}
	srv, err := admin.Start(ctx, admin.Options{
		Token:       ao.token,
		TLS:         tlsConf,
		Backend:     ao.backend,
		Draining:    ao.draining,
		Collectors:  collectors,
		Addr:        cfg.Admin.Addr,
		AllowRemote: cfg.Admin.AllowRemote,
		Log:         log,
		Policy: func() admin.PolicyStatus {
			st := holder.Status()
			return admin.PolicyStatus{
				Source: src.kind, Available: st.Available, Reason: st.Reason, Generation: st.Generation,
				PolicyVersion: st.Versions.Policies, TagVersion: st.Versions.Tags, RoleVersion: st.Versions.Roles, UserStoreVersion: st.Versions.UserStore,
				LastSuccess: st.LastSuccess, TTL: holder.TTL(), Ends: policyEnds(holder.Bundle()),
			}
		},
		Ranger:  src.rangerStatus,
		Refresh: src.Refresh,
		// A round asks up to four documents of every admin URL.
		RefreshTimeout: time.Duration(cfg.Policy.Ranger.TimeoutSecs*4*max(1, len(cfg.Policy.Ranger.URLs()))+5) * time.Second,
	})
	if err != nil {
		return nil, err
	}
	scheme := "http"
	if tlsConf != nil {
		scheme = "https"
	}
	log.Info("admin endpoint listening", "addr", srv.Addr(), "scheme", scheme, "paths", "/metrics /healthz /readyz POST /refresh",
		"bearer-token", ao.token != nil && ao.token() != "", "remote", cfg.Admin.AllowRemote)
	return srv, nil
}

// policyEnds lists the policies of b whose validity schedules all end, for
// pgranger_policy_validity_remaining_seconds.
func policyEnds(b *ranger.Bundle) []metrics.PolicyEnd {
	if b == nil || b.Policies == nil {
		return nil
	}
	var out []metrics.PolicyEnd
	add := func(ps []ranger.RangerPolicy) {
		for i := range ps {
			if end, ok := policy.PolicyValidityEnd(&ps[i]); ok {
				out = append(out, metrics.PolicyEnd{ID: ps[i].ID, Name: ps[i].Name, End: end})
			}
		}
	}
	add(b.Policies.Policies)
	if b.Policies.TagPolicies != nil {
		add(b.Policies.TagPolicies.Policies)
	}
	return out
}
