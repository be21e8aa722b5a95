package sqlrewrite

// The session, the transaction and the server's state as a client sees
// it. None reads a relation or another session's statements.

// sessionFunctions: settings (current_setting, set_config — whose
// protected settings checkFunction refuses), the session's database,
// schema and connection, version, pg_backend_pid, LISTEN/NOTIFY, pg_sleep
// and the session's own sequence values (currval, lastval: values its own
// inserts drew).
var sessionFunctions = builtinFamily{"session", []string{
	"current_database", "current_schema", "current_schemas", "current_setting", "currval",
	"inet_client_addr", "inet_client_port", "inet_server_addr", "inet_server_port", "lastval",
	"pg_backend_pid", "pg_conf_load_time", "pg_jit_available", "pg_listening_channels",
	"pg_notification_queue_usage", "pg_notify", "pg_postmaster_start_time",
	"pg_settings_get_flags", "pg_show_all_settings", "pg_sleep", "pg_sleep_for", "pg_sleep_until",
	"pg_trigger_depth", "set_config", "version",
}}

// lockFunctions: advisory locks, which lock application-chosen numbers,
// not rows or tables.
var lockFunctions = builtinFamily{"advisory locks", []string{
	"pg_advisory_lock", "pg_advisory_lock_shared", "pg_advisory_unlock", "pg_advisory_unlock_all",
	"pg_advisory_unlock_shared", "pg_advisory_xact_lock", "pg_advisory_xact_lock_shared",
	"pg_try_advisory_lock", "pg_try_advisory_lock_shared", "pg_try_advisory_xact_lock",
	"pg_try_advisory_xact_lock_shared",
}}

// transactionFunctions: transaction ids, snapshots (pg_dump exports and
// imports one for parallel dumps) and a transaction id's status (how a
// client learns whether an interrupted commit happened). They show which
// transactions run, not what they do.
var transactionFunctions = builtinFamily{"transaction ids and snapshots", []string{
	"mxid_age", "pg_current_snapshot", "pg_current_xact_id", "pg_current_xact_id_if_assigned",
	"pg_export_snapshot", "pg_snapshot_xip", "pg_snapshot_xmax", "pg_snapshot_xmin",
	"pg_visible_in_snapshot", "pg_xact_status", "txid_current", "txid_current_if_assigned",
	"txid_current_snapshot", "txid_snapshot_xip", "txid_snapshot_xmax", "txid_snapshot_xmin",
	"txid_status", "txid_visible_in_snapshot",
}}

// walFunctions: WAL positions and recovery state, which monitoring tools
// and clients choosing a primary read (pg_is_in_recovery).
var walFunctions = builtinFamily{"WAL positions and recovery state", []string{
	"pg_current_wal_flush_lsn", "pg_current_wal_insert_lsn", "pg_current_wal_lsn",
	"pg_get_wal_replay_pause_state", "pg_is_in_recovery", "pg_is_wal_replay_paused",
	"pg_last_wal_receive_lsn", "pg_last_wal_replay_lsn", "pg_last_xact_replay_timestamp", "pg_lsn",
	"pg_wal_lsn_diff", "pg_walfile_name", "pg_walfile_name_offset",
}}

// sizeFunctions: sizes of relations, databases, tablespaces and values.
// A relation's size counts rows a filter hides; docs/security.md "Known
// limits" says why that is accepted (psql \d+ shows it anyway).
var sizeFunctions = builtinFamily{"sizes", []string{
	"pg_column_compression", "pg_column_size", "pg_database_size", "pg_indexes_size",
	"pg_relation_size", "pg_size_bytes", "pg_size_pretty", "pg_table_size", "pg_tablespace_size",
	"pg_total_relation_size",
}}
