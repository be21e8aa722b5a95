package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"time"

	"github.com/pgranger/pgranger/authoring"
	"github.com/pgranger/pgranger/config"
	"github.com/pgranger/pgranger/policystate"
	"github.com/pgranger/pgranger/ranger"
	"github.com/pgranger/pgranger/ranger/filesource"
	"github.com/pgranger/pgranger/ranger/rangeradmin"
)

// policySource is policy.source wired: the source that keeps the holder's
// policies current (ranger/filesource or ranger/rangeradmin), and the
// store of the same place, where authoring writes.
type policySource struct {
	ranger.Source
	kind  string // policy.source: "file" or "ranger"
	store authoring.Store
	// rangerStatus is the Ranger source's downloads and breaker, for the
	// metrics (nil for files).
	rangerStatus func() rangeradmin.SourceStatus
}

// startPolicySource builds the source named by policy.source with holder
// as its sink, and starts it: it loads what it can before the proxy
// listens (files; Ranger's disk cache and a first download bounded by
// policy.ranger.timeout-secs) and keeps refreshing in the background until
// ctx ends. Queries never wait on it: they read the holder.
func startPolicySource(ctx context.Context, cfg *config.Config, holder *policystate.Holder, log *slog.Logger) (*policySource, error) {
	var src *policySource
	var err error
	switch cfg.Policy.Source {
	case "file":
		src, err = newFileSource(cfg, holder, log)
	case "ranger":
		src, err = newRangerSource(cfg, holder, log)
	default:
		err = fmt.Errorf("policy.source: unknown source %q", cfg.Policy.Source)
	}
	if err != nil {
		return nil, err
	}
	holder.SetSource(policystate.Source{LastSuccess: src.LastSuccess, Err: src.Err, AgesRejections: src.AgesRejections()})
	src.Start(ctx)
	return src, nil
}

func newFileSource(cfg *config.Config, holder *policystate.Holder, log *slog.Logger) (*policySource, error) {
	f := cfg.Policy.File
	paths := ranger.FilePaths{Policies: f.Policies, Tags: f.Tags, Roles: f.Roles, UserStore: f.UserStore}
	src, err := filesource.New(filesource.Config{
		Paths:        paths,
		PollInterval: time.Duration(f.PollIntervalMS) * time.Millisecond,
		Sink:         holder,
		Log:          log,
	})
	if err != nil {
		return nil, fmt.Errorf("policy.file: %w", err)
	}
	return &policySource{Source: src, kind: "file", store: authoring.FileStore{Files: ranger.NewFileStore(paths)}}, nil
}

func newRangerSource(cfg *config.Config, holder *policystate.Holder, log *slog.Logger) (*policySource, error) {
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
		Sink:              holder,
	})
	if err != nil {
		return nil, fmt.Errorf("policy.ranger: %w", err)
	}
	return &policySource{Source: src, kind: "ranger", store: authoring.RangerStore{Client: client}, rangerStatus: src.Snapshot}, nil
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
