// Package rangeradmin is policy.source = "ranger": it downloads a service's
// documents from Ranger Admin the way Ranger's Java plugin does
// (RangerAdminRESTClient and PolicyRefresher in apache/ranger's
// agents-common), polls them in the background behind a circuit breaker,
// and keeps the last good ones in a disk cache so a restart does not
// depend on Ranger Admin being up.
//
// The documents themselves, and how they parse, are package ranger's.
//
//   - adminclient.go: one download of one document (URLs tried in turn,
//     HTTP Basic authentication, what 200, 304 and 404 mean);
//   - adminsource.go: the polling source (a ranger.Source, beside
//     ranger/filesource), its breaker and its status;
//   - diskcache.go: the cache files under policy.ranger.cache-dir;
//   - adminwrite.go: writing through Ranger Admin (grant and revoke, the
//     public policy API, the tag import) for authoring statements and
//     `pgranger policy sync`.
package rangeradmin
