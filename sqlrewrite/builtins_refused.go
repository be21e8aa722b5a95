package sqlrewrite

// refusedBuiltins are the pg_catalog functions reviewed and refused
// because they reach past what a statement's relations give them: they
// run a query string pgranger never sees, read tables, tuples, files or
// storage behind the planner's back, show or act on other sessions or the
// server, or change state that is not a Ranger resource. Each is refused
// by name whatever its arguments, also unqualified (then whichever schema
// the backend would find it in), and its reason is part of the denial.
var refusedBuiltins = []refusedBuiltin{
	{"it runs a query string", []string{
		"query_to_xml", "query_to_xml_and_xmlschema", "query_to_xmlschema", "ts_stat",
	}},
	{"it can run a query string", []string{
		"ts_rewrite",
	}},
	{"it reads a table unchecked", []string{
		"table_to_xml", "table_to_xml_and_xmlschema", "table_to_xmlschema",
	}},
	{"it reads a schema unchecked", []string{
		"schema_to_xml", "schema_to_xml_and_xmlschema", "schema_to_xmlschema",
	}},
	{"it reads a database unchecked", []string{
		"database_to_xml", "database_to_xml_and_xmlschema", "database_to_xmlschema",
	}},
	{"it reads a cursor unchecked", []string{
		"cursor_to_xml", "cursor_to_xmlschema",
	}},
	// currtid2 follows a tuple's update chain in a relation named by a
	// string: it shows which tuples exist and change, filtered or not.
	{"it reads a table's tuples unchecked", []string{
		"currtid2",
	}},
	{"it shows which transactions lock rows", []string{
		"pg_get_multixact_members",
	}},
	{"it shows how relations are stored on disk", []string{
		"pg_filenode_relation", "pg_relation_filenode", "pg_relation_filepath",
	}},
	{"it reads server files", []string{
		"pg_current_logfile", "pg_read_binary_file", "pg_read_file", "pg_read_file_old",
		"pg_stat_file",
	}},
	{"it lists server files", []string{
		"pg_ls_archive_statusdir", "pg_ls_dir", "pg_ls_logdir", "pg_ls_logicalmapdir",
		"pg_ls_logicalsnapdir", "pg_ls_replslotdir", "pg_ls_tmpdir", "pg_ls_waldir",
	}},
	{"it reads server configuration files", []string{
		"pg_hba_file_rules", "pg_ident_file_mappings", "pg_show_all_file_settings",
	}},
	{"large objects are not governed", []string{
		"lo_close", "lo_creat", "lo_create", "lo_export", "lo_from_bytea", "lo_get", "lo_import",
		"lo_lseek", "lo_lseek64", "lo_open", "lo_put", "lo_tell", "lo_tell64", "lo_truncate",
		"lo_truncate64", "lo_unlink", "loread", "lowrite",
	}},
	{"it shows the rewritten statement", []string{
		"current_query",
	}},
	{"it shows rewritten statements", []string{
		"pg_cursor", "pg_prepared_statement",
	}},
	// n_live_tup and the like count rows a filter hides.
	{"it shows other sessions' activity or row counts of governed tables", []string{
		"pg_stat_get_activity", "pg_stat_get_analyze_count", "pg_stat_get_archiver",
		"pg_stat_get_autoanalyze_count", "pg_stat_get_autovacuum_count",
		"pg_stat_get_backend_activity", "pg_stat_get_backend_activity_start",
		"pg_stat_get_backend_client_addr", "pg_stat_get_backend_client_port",
		"pg_stat_get_backend_dbid", "pg_stat_get_backend_idset", "pg_stat_get_backend_pid",
		"pg_stat_get_backend_start", "pg_stat_get_backend_userid",
		"pg_stat_get_backend_wait_event", "pg_stat_get_backend_wait_event_type",
		"pg_stat_get_backend_xact_start", "pg_stat_get_bgwriter_buf_written_checkpoints",
		"pg_stat_get_bgwriter_buf_written_clean", "pg_stat_get_bgwriter_maxwritten_clean",
		"pg_stat_get_bgwriter_requested_checkpoints", "pg_stat_get_bgwriter_stat_reset_time",
		"pg_stat_get_bgwriter_timed_checkpoints", "pg_stat_get_blocks_fetched",
		"pg_stat_get_blocks_hit", "pg_stat_get_buf_alloc", "pg_stat_get_buf_fsync_backend",
		"pg_stat_get_buf_written_backend", "pg_stat_get_checkpoint_sync_time",
		"pg_stat_get_checkpoint_write_time", "pg_stat_get_db_active_time",
		"pg_stat_get_db_blk_read_time", "pg_stat_get_db_blk_write_time",
		"pg_stat_get_db_blocks_fetched", "pg_stat_get_db_blocks_hit",
		"pg_stat_get_db_checksum_failures", "pg_stat_get_db_checksum_last_failure",
		"pg_stat_get_db_conflict_all", "pg_stat_get_db_conflict_bufferpin",
		"pg_stat_get_db_conflict_lock", "pg_stat_get_db_conflict_snapshot",
		"pg_stat_get_db_conflict_startup_deadlock", "pg_stat_get_db_conflict_tablespace",
		"pg_stat_get_db_deadlocks", "pg_stat_get_db_idle_in_transaction_time",
		"pg_stat_get_db_numbackends", "pg_stat_get_db_session_time", "pg_stat_get_db_sessions",
		"pg_stat_get_db_sessions_abandoned", "pg_stat_get_db_sessions_fatal",
		"pg_stat_get_db_sessions_killed", "pg_stat_get_db_stat_reset_time",
		"pg_stat_get_db_temp_bytes", "pg_stat_get_db_temp_files", "pg_stat_get_db_tuples_deleted",
		"pg_stat_get_db_tuples_fetched", "pg_stat_get_db_tuples_inserted",
		"pg_stat_get_db_tuples_returned", "pg_stat_get_db_tuples_updated",
		"pg_stat_get_db_xact_commit", "pg_stat_get_db_xact_rollback", "pg_stat_get_dead_tuples",
		"pg_stat_get_function_calls", "pg_stat_get_function_self_time",
		"pg_stat_get_function_total_time", "pg_stat_get_ins_since_vacuum",
		"pg_stat_get_last_analyze_time", "pg_stat_get_last_autoanalyze_time",
		"pg_stat_get_last_autovacuum_time", "pg_stat_get_last_vacuum_time",
		"pg_stat_get_live_tuples", "pg_stat_get_mod_since_analyze", "pg_stat_get_numscans",
		"pg_stat_get_progress_info", "pg_stat_get_recovery_prefetch",
		"pg_stat_get_replication_slot", "pg_stat_get_slru", "pg_stat_get_snapshot_timestamp",
		"pg_stat_get_subscription", "pg_stat_get_subscription_stats", "pg_stat_get_tuples_deleted",
		"pg_stat_get_tuples_fetched", "pg_stat_get_tuples_hot_updated",
		"pg_stat_get_tuples_inserted", "pg_stat_get_tuples_returned", "pg_stat_get_tuples_updated",
		"pg_stat_get_vacuum_count", "pg_stat_get_wal", "pg_stat_get_wal_receiver",
		"pg_stat_get_wal_senders", "pg_stat_get_xact_blocks_fetched",
		"pg_stat_get_xact_blocks_hit", "pg_stat_get_xact_function_calls",
		"pg_stat_get_xact_function_self_time", "pg_stat_get_xact_function_total_time",
		"pg_stat_get_xact_numscans", "pg_stat_get_xact_tuples_deleted",
		"pg_stat_get_xact_tuples_fetched", "pg_stat_get_xact_tuples_hot_updated",
		"pg_stat_get_xact_tuples_inserted", "pg_stat_get_xact_tuples_returned",
		"pg_stat_get_xact_tuples_updated",
	}},
	{"it serves the statistics views, which are not exposed", []string{
		"pg_indexam_progress_phasename", "pg_stat_clear_snapshot", "pg_stat_force_next_flush",
		"pg_stat_have_stats",
	}},
	{"it decodes sampled values of extended statistics", []string{
		"pg_mcv_list_items",
	}},
	{"it shows other sessions' activity", []string{
		"pg_blocking_pids", "pg_isolation_test_session_is_blocked", "pg_lock_status",
		"pg_safe_snapshot_blocking_pids",
	}},
	{"it shows other sessions' transactions", []string{
		"pg_last_committed_xact", "pg_prepared_xact", "pg_xact_commit_timestamp",
		"pg_xact_commit_timestamp_origin",
	}},
	{"it acts on other sessions", []string{
		"pg_cancel_backend", "pg_log_backend_memory_contexts", "pg_terminate_backend",
	}},
	{"it acts on the server", []string{
		"pg_backup_start", "pg_backup_stop", "pg_create_restore_point", "pg_promote",
		"pg_reload_conf", "pg_rotate_logfile", "pg_rotate_logfile_old", "pg_switch_wal",
		"pg_wal_replay_pause", "pg_wal_replay_resume",
	}},
	{"it changes server statistics", []string{
		"pg_stat_reset", "pg_stat_reset_replication_slot", "pg_stat_reset_shared",
		"pg_stat_reset_single_function_counters", "pg_stat_reset_single_table_counters",
		"pg_stat_reset_slru", "pg_stat_reset_subscription_stats",
	}},
	{"it shows server internals", []string{
		"pg_config", "pg_control_checkpoint", "pg_control_init", "pg_control_recovery",
		"pg_control_system", "pg_get_backend_memory_contexts", "pg_get_shmem_allocations",
		"pg_get_wal_resource_managers",
	}},
	// Decoded WAL holds every row of every table.
	{"it reads or writes the change stream", []string{
		"pg_logical_emit_message", "pg_logical_slot_get_binary_changes",
		"pg_logical_slot_get_changes", "pg_logical_slot_peek_binary_changes",
		"pg_logical_slot_peek_changes",
	}},
	{"it reads the change stream", []string{
		"pg_replication_slot_advance",
	}},
	{"it acts on replication", []string{
		"pg_copy_logical_replication_slot", "pg_copy_physical_replication_slot",
		"pg_create_logical_replication_slot", "pg_create_physical_replication_slot",
		"pg_drop_replication_slot", "pg_replication_origin_advance",
		"pg_replication_origin_create", "pg_replication_origin_drop", "pg_replication_origin_oid",
		"pg_replication_origin_progress", "pg_replication_origin_session_is_setup",
		"pg_replication_origin_session_progress", "pg_replication_origin_session_reset",
		"pg_replication_origin_session_setup", "pg_replication_origin_xact_reset",
		"pg_replication_origin_xact_setup",
	}},
	{"it shows replication state", []string{
		"pg_get_replication_slots", "pg_show_replication_origin_status",
	}},
	{"it changes the catalog", []string{
		"binary_upgrade_create_empty_extension", "binary_upgrade_set_missing_value",
		"binary_upgrade_set_next_array_pg_type_oid", "binary_upgrade_set_next_heap_pg_class_oid",
		"binary_upgrade_set_next_heap_relfilenode", "binary_upgrade_set_next_index_pg_class_oid",
		"binary_upgrade_set_next_index_relfilenode",
		"binary_upgrade_set_next_multirange_array_pg_type_oid",
		"binary_upgrade_set_next_multirange_pg_type_oid", "binary_upgrade_set_next_pg_authid_oid",
		"binary_upgrade_set_next_pg_enum_oid", "binary_upgrade_set_next_pg_tablespace_oid",
		"binary_upgrade_set_next_pg_type_oid", "binary_upgrade_set_next_toast_pg_class_oid",
		"binary_upgrade_set_next_toast_relfilenode", "binary_upgrade_set_record_init_privs",
		"pg_extension_config_dump", "pg_import_system_collations", "pg_nextoid",
		"pg_stop_making_pinned_objects",
	}},
	{"it changes an index", []string{
		"brin_desummarize_range", "brin_summarize_new_values", "brin_summarize_range",
		"gin_clean_pending_list",
	}},
	// A column DEFAULT still draws from its sequence.
	{"it changes a sequence, which is not a Ranger resource", []string{
		"nextval", "setval",
	}},
	// A sequence's value is read with select on the sequence.
	{"it reads a sequence unchecked", []string{
		"pg_sequence_last_value",
	}},
	// The backend's session is the service role's: these name it. The
	// keywords are rewritten to the authenticated user (session.go).
	{"it names pgranger's service role; CURRENT_USER and SESSION_USER name you", []string{
		"current_user", "getpgusername", "session_user",
	}},
}

// extensionBuiltins are functions of extensions that pgranger refuses by
// name when called unqualified or qualified with pg_catalog, as it did
// before built-ins were an allow list: adminpack installs into pg_catalog
// (where any unlisted name is refused anyway; these keep their reason),
// dblink and pg_stat_statements into a schema of the administrator's
// choice (qualified with it, a call is a udf needing Ranger udf access).
// PostgreSQL 15's own catalog has none of them.
var extensionBuiltins = []refusedBuiltin{
	{"it writes server files", []string{
		"pg_file_rename", "pg_file_sync", "pg_file_unlink", "pg_file_write",
	}},
	{"it lists server files", []string{
		"pg_logdir_ls",
	}},
	{"it shows other sessions' statements", []string{
		"pg_stat_statements", "pg_stat_statements_info",
	}},
	{"it changes server statistics", []string{
		"pg_stat_statements_reset",
	}},
	{"it runs queries elsewhere", []string{
		"dblink", "dblink_build_sql_delete", "dblink_build_sql_insert", "dblink_build_sql_update",
		"dblink_cancel_query", "dblink_close", "dblink_connect", "dblink_connect_u",
		"dblink_current_query", "dblink_disconnect", "dblink_error_message", "dblink_exec",
		"dblink_fdw_validator", "dblink_fetch", "dblink_get_connections", "dblink_get_notify",
		"dblink_get_pkey", "dblink_get_result", "dblink_is_busy", "dblink_open",
		"dblink_send_query",
	}},
}
