-- case: current_user becomes the authenticated user
SELECT current_user

-- case: session_user, user and current_role become the user
SELECT session_user, user, current_role

-- case: current_user with an alias keeps the alias
SELECT current_user AS me

-- case: current_user in WHERE
SELECT id FROM sales.orders WHERE customer = current_user

-- case: Hive current_user() becomes the user
SELECT current_user()

-- case: Hive logged_in_user()
-- pg: a Hive session UDF, unknown to PostgreSQL, becomes a literal
SELECT logged_in_user()

-- case: is_role_in_session with a held role
-- pg: a Hive session UDF, unknown to PostgreSQL, becomes a literal
SELECT is_role_in_session('analyst')

-- case: is_role_in_session with a role not held
-- pg: a Hive session UDF, unknown to PostgreSQL, becomes a literal
SELECT is_role_in_session('admin')

-- case: current_available_roles
-- pg: a Hive session UDF, unknown to PostgreSQL, becomes a literal
SELECT current_available_roles()

-- case: current_groups and current_user_groups
-- pg: a Hive session UDF, unknown to PostgreSQL, becomes a literal
SELECT current_groups(), current_user_groups()

-- case: a user attribute with a quote does not change the session literals
-- user: eve
-- pg: a Hive session UDF, unknown to PostgreSQL, becomes a literal
SELECT current_user, current_groups()

-- case: current_catalog and current_schema are not touched
SELECT current_catalog, current_schema

-- case: SET search_path is tracked and passes
SET search_path = sales, public

-- case: SET search_path then an unqualified reference in the same text
SET search_path = sales, public; SELECT ssn FROM orders

-- case: SET search_path to hr then a denied column in the same text
SET search_path = hr; SELECT salary FROM employees

-- case: SET search_path with TO and quoted names
SET search_path TO "sales", 'public'; SELECT id FROM orders

-- case: SET search_path to a mixed-case quoted schema
SET search_path = "Sales"; SELECT id FROM orders

-- case: RESET search_path returns to the default
-- search_path: sales
RESET search_path; SELECT id FROM orders

-- case: SET search_path TO DEFAULT
-- search_path: sales
SET search_path TO DEFAULT; SELECT id FROM orders

-- case: RESET ALL returns to the default
-- search_path: sales
RESET ALL; SELECT id FROM orders

-- case: DISCARD ALL returns to the default
-- search_path: sales
DISCARD ALL; SELECT id FROM orders

-- case: SET search_path naming pg_catalog first passes
SET search_path = pg_catalog, sales; SELECT relname FROM pg_class

-- case: SET search_path with pg_temp before pg_catalog passes
SET search_path = pg_temp, pg_catalog, sales; SELECT id FROM orders

-- case: SET search_path putting pg_catalog after another schema is denied
SET search_path = sales, pg_catalog

-- case: SET search_path putting pg_catalog after $user is denied
SET search_path = "$user", public, pg_catalog

-- case: SET search_path with an odd-case setting name is tracked
SET "Search_Path" = sales; SELECT ssn FROM orders

-- case: SET search_path with an upper-case setting name putting pg_catalog last is denied
SET SEARCH_PATH = sales, pg_catalog

-- case: SET search_path to a single quoted list is one schema name
SET search_path = 'sales, public'; SELECT id FROM orders

-- case: SET LOCAL search_path is not supported
SET LOCAL search_path = sales

-- case: SET search_path FROM CURRENT
SET search_path FROM CURRENT

-- case: SET SESSION search_path
SET SESSION search_path = sales; SELECT ssn FROM orders

-- case: SET ROLE is denied
SET ROLE postgres

-- case: RESET ROLE is denied
RESET ROLE

-- case: SET SESSION AUTHORIZATION is denied
SET SESSION AUTHORIZATION postgres

-- case: RESET SESSION AUTHORIZATION is denied
RESET SESSION AUTHORIZATION

-- case: SET client_encoding is denied
SET client_encoding = 'LATIN1'

-- case: SET NAMES is denied
SET NAMES 'LATIN1'

-- case: SET standard_conforming_strings is denied
SET standard_conforming_strings = off

-- case: SET row_security passes (off turns row-level security filtering into an error)
SET row_security = off

-- case: SET client_encoding to UTF8, the value sessions run with, passes
set client_encoding to 'UTF8'

-- case: SET NAMES to another spelling of UTF8 passes
SET NAMES 'utf-8'

-- case: SET standard_conforming_strings = on, the value sessions run with, passes
SET standard_conforming_strings = on

-- case: RESET of a protected setting is denied
RESET standard_conforming_strings

-- case: SET of an ordinary setting passes
SET statement_timeout = '5s'

-- case: SET LOCAL of a setting on the list passes
SET LOCAL statement_timeout = '5s'

-- case: SET TIME ZONE passes
SET TIME ZONE 'UTC'

-- case: SET of a mixed-case protected setting name
SET "Role" = 'postgres'

-- case: SET of an upper-case standard_conforming_strings is denied
SET "STANDARD_CONFORMING_STRINGS" = off

-- case: SET SESSION of an odd-case client_encoding is denied
SET SESSION "Client_Encoding" = 'SQL_ASCII'

-- case: RESET of an odd-case role is denied
RESET "ROLE"

-- case: SET of an odd-case session_authorization in a multi-statement text is denied
SELECT 1; SET "Session_Authorization" = postgres

-- case: SET TRANSACTION passes
SET TRANSACTION ISOLATION LEVEL SERIALIZABLE

-- case: SHOW search_path passes
SHOW search_path

-- case: SET client_min_messages = log is refused (LOG messages would reach the client)
SET client_min_messages = log

-- case: SET client_min_messages to a DEBUG level is refused
SET client_min_messages TO 'DEBUG1'

-- case: SET client_min_messages = debug is refused
SET client_min_messages = debug

-- case: SET LOCAL client_min_messages = log is refused
SET LOCAL client_min_messages = log

-- case: SET client_min_messages = warning passes
SET client_min_messages = warning

-- case: SET client_min_messages to an upper-case NOTICE passes
SET client_min_messages TO 'NOTICE'

-- case: SET client_min_messages = info passes
SET client_min_messages = info

-- case: RESET client_min_messages passes
RESET client_min_messages

-- case: SET client_min_messages TO DEFAULT passes
SET client_min_messages TO DEFAULT

-- case: SET client_min_messages to a number is refused
SET client_min_messages = 1

-- case: SET debug_print_plan is refused
SET debug_print_plan = on

-- case: SET LOCAL debug_print_parse is refused
SET LOCAL debug_print_parse = on

-- case: SET debug_print_rewritten is refused
SET debug_print_rewritten = on

-- case: SET trace_sort is refused
SET trace_sort = on

-- case: SET enable_seqscan is refused (planner settings steer the plan against the barrier)
SET enable_seqscan = off

-- case: SET of an odd-case enable_seqscan is refused
SET "Enable_SeqScan" = off

-- case: SET cpu_operator_cost is refused
SET cpu_operator_cost = 0

-- case: SET geqo is refused
SET geqo = off

-- case: SET join_collapse_limit is refused
SET join_collapse_limit = 1

-- case: SET plan_cache_mode is refused
SET plan_cache_mode = force_generic_plan

-- case: SET debug_parallel_query is refused
SET debug_parallel_query = on

-- case: SET work_mem is refused
SET work_mem = '64MB'

-- case: SET jit is refused
SET jit = off

-- case: SET max_parallel_workers_per_gather is refused
SET max_parallel_workers_per_gather = 0

-- case: SET lc_messages is refused
SET lc_messages = 'C'

-- case: SET SEED is refused
SET SEED TO 0.5

-- case: SET session_replication_role is refused
SET session_replication_role = replica

-- case: SET log_statement is refused
SET log_statement = 'all'

-- case: SET of a custom placeholder is refused
SET myapp.tenant = '42'

-- case: a refused setting in a multi-statement text refuses the text
SELECT 1; SET debug_print_plan = on; SELECT 2

-- case: a refused setting is refused for a super user too
-- user: admin
SET debug_print_plan = on

-- case: RESET of a setting not on the list passes (back to the session's default)
RESET enable_seqscan

-- case: SET TO DEFAULT of a setting not on the list passes
SET enable_seqscan TO DEFAULT

-- case: an operator's setting passes
-- options: allow-setting=enable_seqscan
SET enable_seqscan = off

-- case: an operator's setting compares case-insensitively
-- options: allow-setting=Enable_SeqScan
SET ENABLE_SEQSCAN = off

-- case: an operator's setting opens only itself
-- options: allow-setting=enable_seqscan
SET enable_hashjoin = off

-- case: an operator's placeholder family passes
-- options: allow-setting=myapp.*
SET myapp.tenant = '42'

-- case: an operator's placeholder family opens only its own prefix
-- options: allow-setting=myapp.*
SET myapplication.tenant = '42'

-- case: an operator's entry does not open a setting pgranger keeps
-- options: allow-setting=role
SET ROLE postgres

-- case: an operator's entry does not lift client_min_messages' values
-- options: allow-setting=client_min_messages
SET client_min_messages = log

-- case: what drivers and pg_dump set passes
SET DateStyle = ISO, DMY; SET "IntervalStyle" = postgres; SET extra_float_digits = 3; SET application_name = 'psql'; SET lock_timeout = 0; SET idle_in_transaction_session_timeout = 0; SET synchronous_commit = off; SET default_transaction_read_only = on; SET bytea_output = hex; SET XML OPTION CONTENT; SET quote_all_identifiers = true; SET synchronize_seqscans TO off; SET check_function_bodies = false; SET default_tablespace = ''; SET LOCAL TIME ZONE 'UTC'

-- case: SET TRANSACTION as pg_dump sends it passes
SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY

-- case: SET SESSION CHARACTERISTICS as pgjdbc sends it passes
SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE

-- case: SET TRANSACTION SNAPSHOT as pg_dump's workers send it passes
SET TRANSACTION SNAPSHOT '00000003-0000001B-1'

-- case: SET SCHEMA is SET search_path, tracked
SET SCHEMA 'sales'; SELECT ssn FROM orders

-- case: set_config on debug_print_plan is refused
SELECT set_config('debug_print_plan', 'on', false)

-- case: set_config on client_min_messages = log is refused
SELECT set_config('client_min_messages', 'log', false)

-- case: set_config on client_min_messages = warning passes
SELECT set_config('client_min_messages', 'warning', false)

-- case: set_config on client_min_messages with a computed value is refused
SELECT set_config('client_min_messages', lower('LOG'), false)

-- case: set_config on enable_seqscan under a WHERE is refused
SELECT id FROM sales.orders WHERE set_config('enable_seqscan', 'off', false) IS NOT NULL

-- case: set_config through pg_settings on debug_print_plan is refused
SELECT set_config(name, 'on', false) FROM pg_settings WHERE name = 'debug_print_plan'

-- case: set_config through pg_settings on client_min_messages = log is refused
SELECT set_config(name, 'log', false) FROM pg_settings WHERE name = 'client_min_messages'

-- case: set_config on an operator's setting passes
-- options: allow-setting=enable_seqscan
SELECT set_config('enable_seqscan', 'off', false)

-- case: UPDATE of pg_settings is refused
UPDATE pg_settings SET setting = 'on' WHERE name = 'debug_print_plan'

-- case: ALTER ROLE … SET is refused
ALTER ROLE bob SET debug_print_plan = on

-- case: ALTER DATABASE … SET is refused
ALTER DATABASE demo SET enable_seqscan = off

-- case: SHOW of any setting passes
SHOW debug_print_plan

-- case: current_setting of any setting passes
SELECT current_setting('enable_seqscan')

-- case: a pg_catalog-first path leaves catalog names unqualified
-- search_path: pg_catalog, sales
SELECT relname FROM pg_class

-- case: a path without pg_catalog first qualifies catalog names
-- search_path: sales, pg_catalog
SELECT relname FROM pg_class

-- case: $user in the search_path resolves to the authenticated user's schema
-- search_path: $user, sales
-- pg: $user is the authenticated user (bob) for pgranger, the test's superuser for PostgreSQL
SELECT id FROM notes

-- case: $user in the search_path for a user without a schema falls through
-- search_path: $user, sales
SELECT id FROM orders
