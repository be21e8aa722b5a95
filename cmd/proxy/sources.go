package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"time"

	"github.com/pgranger/pgranger/authoring"
	"github.com/pgranger/pgranger/config"
	"github.com/pgranger/pgranger/policystate"
	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/ranger/rangeradmin"
)

// policySource is the running source of policy.source, as serve and the
// admin endpoint need it.
type policySource struct {
	kind string // "file" or "ranger"
	// refresh fetches now (POST /refresh): a JSON-encodable report and
	// whether everything was obtained.
	refresh func(ctx context.Context) (any, bool, error)
	// ranger is the Ranger source's status (nil for files).
	ranger func() rangeradmin.SourceStatus
	// store is where authoring writes (authoring.go), and reload brings a
	// change into force at once (the file source checks its files, the
	// Ranger source runs a round).
	store  authoring.Store
	reload func(ctx context.Context) error
}

// startPolicySource builds the source named by policy.source, connects it
// to holder, loads what it can before the proxy listens (files; Ranger's
// disk cache and a first download bounded by policy.ranger.timeout-secs),
// and keeps it refreshing in the background until ctx ends. Queries never
// wait on it: they read the holder.
func startPolicySource(ctx context.Context, cfg *config.Config, holder *policystate.Holder, log *slog.Logger) (*policySource, error) {
	switch cfg.Policy.Source {
	case "file":
		return startFileSource(ctx, cfg, holder, log), nil
	case "ranger":
		return startRangerSource(ctx, cfg, holder, log)
	}
	return nil, fmt.Errorf("policy.source: unknown source %q", cfg.Policy.Source)
}

func startFileSource(ctx context.Context, cfg *config.Config, holder *policystate.Holder, log *slog.Logger) *policySource {
	src := ranger.NewFileSource(ranger.FilePaths{
		Policies:  cfg.Policy.File.Policies,
		Tags:      cfg.Policy.File.Tags,
		Roles:     cfg.Policy.File.Roles,
		UserStore: cfg.Policy.File.UserStore,
	})
	holder.SetSource(policystate.Source{LastSuccess: src.LastSuccess, Err: src.Err})
	var lastErr string
	onError := func(err error) {
		// Loud, but once per distinct problem rather than once per poll.
		if err.Error() != lastErr {
			log.Error("policy files rejected; the last good policies stay in force until policy.cache-ttl-secs passes, then governed statements are denied", "err", err)
			lastErr = err.Error()
		}
	}
	onBundle := func(b *ranger.Bundle) {
		if err := holder.Install(b); err != nil {
			onError(err)
			return
		}
		lastErr = ""
	}
	if b, err := src.Check(); err != nil {
		onError(err)
	} else if b != nil {
		onBundle(b)
	}
	// The background loop and POST /refresh may both check: one at a time,
	// so the lastErr bookkeeping above stays single-threaded.
	sem := make(chan struct{}, 1)
	check := func() error {
		sem <- struct{}{}
		defer func() { <-sem }()
		b, err := src.Check()
		switch {
		case err != nil:
			onError(err)
		case b != nil:
			onBundle(b)
		}
		return err
	}
	go func() {
		t := time.NewTicker(time.Duration(cfg.Policy.File.PollIntervalMS) * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				check()
			}
		}
	}()
	return &policySource{
		kind:  "file",
		store: authoring.FileStore{Files: ranger.NewFileStore(src.Paths())},
		reload: func(context.Context) error {
			// A write may leave size and modification time as they were.
			src.Invalidate()
			return check()
		},
		refresh: func(context.Context) (any, bool, error) {
			err := check()
			st := holder.Status()
			rep := map[string]any{"source": "file", "policyVersion": st.Versions.Policy, "tagVersion": st.Versions.Tag,
				"roleVersion": st.Versions.Role, "userStoreVersion": st.Versions.UserStore, "generation": st.Generation, "available": st.Available}
			if err != nil {
				rep["error"] = err.Error()
			}
			return rep, err == nil && st.Available, nil
		},
	}
}

// newAdminClient builds the Ranger Admin client of policy.ranger: the
// password from the environment or its file (checked now), the URLs, TLS.
func newAdminClient(cfg *config.Config, log *slog.Logger) (*rangeradmin.AdminClient, error) {
	rc := cfg.Policy.Ranger
	password := func() (string, error) { return rc.AdminPassword, nil }
	if rc.AdminPasswordFile != "" {
		st, err := os.Stat(rc.AdminPasswordFile)
		if err != nil {
			return nil, fmt.Errorf("policy.ranger.admin-password-file: %w", err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			log.Warn("policy.ranger.admin-password-file can be read by other users; chmod 600 it", "path", rc.AdminPasswordFile, "mode", st.Mode().Perm().String())
		}
		password = rangeradmin.PasswordFromFile(rc.AdminPasswordFile)
		if _, err := password(); err != nil {
			return nil, fmt.Errorf("policy.ranger.admin-password-file: %w", err)
		}
	}
	client, err := rangeradmin.NewAdminClient(rangeradmin.AdminClientConfig{
		URLs:               rc.URLs(),
		User:               rc.AdminUser,
		Password:           password,
		ServiceName:        cfg.Policy.ServiceName,
		ClusterName:        rc.ClusterName,
		PluginID:           rc.PluginID,
		Timeout:            time.Duration(rc.TimeoutSecs) * time.Second,
		CAFile:             rc.CAFile,
		ClientCert:         rc.ClientCert,
		ClientKey:          rc.ClientKey,
		AcceptInvalidCerts: rc.AcceptInvalidCerts,
	})
	if err != nil {
		return nil, fmt.Errorf("policy.ranger: %w", err)
	}
	return client, nil
}

func startRangerSource(ctx context.Context, cfg *config.Config, holder *policystate.Holder, log *slog.Logger) (*policySource, error) {
	rc := cfg.Policy.Ranger
	client, err := newAdminClient(cfg, log)
	if err != nil {
		return nil, err
	}
	if rc.AcceptInvalidCerts {
		log.Warn("policy.ranger.accept-invalid-certs = true: the Ranger Admin certificate is NOT verified; anyone on the network path can serve pgranger any policies and read the admin password. Use ca-file instead; never run this in production.")
	}
	for _, raw := range client.URLs() {
		if u, err := url.Parse(raw); err == nil && u.Scheme == "http" && !config.IsLoopbackHost(u.Hostname()) {
			log.Warn("policy.ranger.url uses plain http to another host: the admin password and the policies cross the network unencrypted", "url", raw)
		}
	}
	docs := []rangeradmin.Document{rangeradmin.DocPolicies}
	if rc.DownloadTags {
		docs = append(docs, rangeradmin.DocTags)
	}
	if rc.DownloadRoles {
		docs = append(docs, rangeradmin.DocRoles)
	}
	if rc.DownloadUserStore {
		docs = append(docs, rangeradmin.DocUserStore)
	}
	src, err := rangeradmin.NewAdminSource(rangeradmin.AdminSourceConfig{
		Client:            client,
		Documents:         docs,
		PollInterval:      rc.PollInterval(),
		CacheDir:          rc.CacheDir,
		BreakerFailures:   rc.BreakerFailures,
		BreakerMaxBackoff: time.Duration(rc.BreakerMaxBackoffSecs) * time.Second,
		Log:               log,
		Install:           holder.Install,
		Clear:             holder.Clear,
	})
	if err != nil {
		return nil, fmt.Errorf("policy.ranger: %w", err)
	}
	// Ranger's source ages rejected documents itself: they are downloaded
	// again, and only a 304 to the version in force confirms it.
	holder.SetSource(policystate.Source{LastSuccess: src.LastSuccess, Err: func() error {
		if src.Err() != nil {
			// The details (URLs, status, Ranger's message) are in the log;
			// SQL clients learn only that Ranger is the problem.
			return errors.New("policies could not be downloaded from Ranger Admin; the pgranger log has the details")
		}
		return nil
	}, AgesRejections: true})
	if ok, err := src.LoadCache(); err != nil {
		log.Warn("policy.ranger.cache-dir: the disk cache is not used", "err", err)
	} else if ok {
		last, _ := src.Status()
		log.Info("policies loaded from the disk cache; they count as fresh from their last confirmation by Ranger", "cache-dir", rc.CacheDir, "confirmed", last.Format(time.RFC3339Nano))
	}
	first, cancel := context.WithTimeout(ctx, time.Duration(rc.TimeoutSecs)*time.Second)
	rep, _ := src.Refresh(first)
	cancel()
	if rep.Error != "" {
		log.Warn("the first download from Ranger Admin failed; refreshing in the background", "urls", client.URLs())
	}
	go src.Run(ctx)
	return &policySource{
		kind:  "ranger",
		store: authoring.RangerStore{Client: client},
		reload: func(ctx context.Context) error {
			rep, err := src.Refresh(ctx)
			if err == nil && rep.Error != "" {
				err = errors.New(rep.Error)
			}
			return err
		},
		refresh: func(ctx context.Context) (any, bool, error) {
			rep, err := src.Refresh(ctx)
			if err != nil {
				return nil, false, err
			}
			st := holder.Status()
			return map[string]any{
				"source":     "ranger",
				"versions":   rep.Versions,
				"results":    rep.Results,
				"breaker":    rep.Breaker,
				"error":      rep.Error,
				"available":  st.Available,
				"generation": st.Generation,
				"inForce": map[string]int64{"policyVersion": st.Versions.Policy, "tagVersion": st.Versions.Tag,
					"roleVersion": st.Versions.Role, "userStoreVersion": st.Versions.UserStore},
			}, rep.Error == "", nil
		},
		ranger: src.Snapshot,
	}, nil
}
