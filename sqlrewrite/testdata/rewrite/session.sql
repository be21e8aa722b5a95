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

-- case: SET LOCAL of an ordinary setting passes
SET LOCAL work_mem = '64MB'

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
