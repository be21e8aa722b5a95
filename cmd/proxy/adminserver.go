package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/pgranger/pgranger/admin"
	"github.com/pgranger/pgranger/config"
)

// startAdmin serves admin.addr (nil, nil when it is "").
func startAdmin(ctx context.Context, cfg *config.Config, holder *policyHolder, src *policySource, log *slog.Logger) (*admin.Server, error) {
	if cfg.Admin.Addr == "" {
		return nil, nil
	}
	ttl := holder.ttl
	srv, err := admin.Start(ctx, admin.Options{
		Addr:        cfg.Admin.Addr,
		AllowRemote: cfg.Admin.AllowRemote,
		Log:         log,
		Policy: func() admin.PolicyStatus {
			st := holder.snapshot()
			return admin.PolicyStatus{
				Source: src.kind, Available: st.Available, Reason: st.Reason, Generation: st.Generation,
				PolicyVersion: st.Versions.Policy, TagVersion: st.Versions.Tag, RoleVersion: st.Versions.Role, UserStoreVersion: st.Versions.UserStore,
				LastSuccess: st.LastSuccess, TTL: ttl,
			}
		},
		Ranger:  src.ranger,
		Refresh: src.refresh,
		// A round asks up to four documents of every admin URL.
		RefreshTimeout: time.Duration(cfg.Policy.Ranger.TimeoutSecs*4*max(1, len(cfg.Policy.Ranger.URLs()))+5) * time.Second,
	})
	if err != nil {
		return nil, err
	}
	log.Info("admin endpoint listening", "addr", srv.Addr(), "paths", "/metrics /healthz /readyz POST /refresh")
	return srv, nil
}
