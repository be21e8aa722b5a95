-- What pg_dump sends (docs/clients.md "pg_dump"): set_config on
-- search_path in the one shape pgranger tracks, set_config on a setting
-- named by pg_settings' WHERE, LOCK … IN ACCESS SHARE MODE, sequences.

-- case: pg_dump's empty search_path passes and is tracked (only pg_catalog)
-- user: bob
SELECT pg_catalog.set_config('search_path', '', false); SELECT relname FROM pg_class

-- case: set_config on search_path is tracked like SET search_path
-- user: bob
SELECT pg_catalog.set_config('search_path', 'sales', false); SELECT ssn FROM orders

-- case: an unqualified set_config on search_path is qualified and tracked
-- user: bob
SELECT set_config('search_path', 'hr, public', false); SELECT name FROM employees

-- case: set_config's value is read as PostgreSQL reads it (quoted names keep case, others fold)
-- user: bob
SELECT set_config('SEARCH_PATH', ' "Sales" ,  HR ', false); SELECT name FROM employees

-- case: set_config on search_path with $user
-- user: bob
SELECT set_config('search_path', '"$user", public', false); SELECT id FROM notes

-- case: set_config on search_path with an alias passes
-- user: bob
SELECT set_config('search_path', 'sales', false) AS path

-- case: set_config putting pg_catalog after another schema is denied
-- user: bob
SELECT set_config('search_path', 'public, pg_catalog', false)

-- case: set_config putting quoted pg_catalog after another schema is denied
-- user: bob
SELECT set_config('search_path', 'public,"pg_catalog"', false)

-- case: set_config on search_path local to the transaction is not supported
-- user: bob
SELECT set_config('search_path', 'sales', true)

-- case: set_config on search_path with a trailing comma is denied
-- user: bob
SELECT set_config('search_path', 'sales,', false)

-- case: set_config on search_path with an unterminated quote is denied
-- user: bob
SELECT set_config('search_path', '"sales', false)

-- case: set_config on search_path with a name PostgreSQL would truncate is denied
-- user: bob
SELECT set_config('search_path', 'a123456789012345678901234567890123456789012345678901234567890123', false)

-- case: set_config on search_path with an unquoted non-ASCII name folds only ASCII letters
-- user: bob
SELECT set_config('search_path', 'Ünïcode, Sales', false); SELECT id FROM orders

-- case: set_config on search_path with a computed value is denied
-- user: bob
SELECT set_config('search_path', current_setting('search_path'), false)

-- case: set_config on search_path with a computed is_local is denied
-- user: bob
SELECT set_config('search_path', 'sales', 1 = 1)

-- case: set_config on search_path over a FROM (once per row) is denied
-- user: bob
SELECT set_config('search_path', 'sales', false) FROM sales.orders

-- case: set_config on search_path under a WHERE (perhaps never) is denied
-- user: bob
SELECT set_config('search_path', 'sales', false) WHERE false

-- case: set_config on search_path beside another column is denied
-- user: bob
SELECT set_config('search_path', 'sales', false), 1

-- case: set_config on search_path in a scalar subquery is denied
-- user: bob
SELECT (SELECT set_config('search_path', 'sales', false))

-- case: set_config on search_path in a CTE is denied
-- user: bob
WITH p AS (SELECT set_config('search_path', 'sales', false)) SELECT * FROM p

-- case: set_config on search_path with named arguments is denied
-- user: bob
SELECT set_config(setting_name => 'search_path', new_value => 'sales', is_local => false)

-- case: set_config on search_path in another schema is a udf
-- user: bob
SELECT public.set_config('search_path', 'sales', false)

-- case: set_config on search_path inside EXPLAIN is denied
-- user: bob
EXPLAIN SELECT set_config('search_path', 'sales', false)

-- case: set_config on search_path inside COPY is denied
-- user: bob
COPY (SELECT set_config('search_path', 'sales', false)) TO STDOUT

-- case: set_config on role is still denied
-- user: bob
SELECT pg_catalog.set_config('role', 'postgres', false)

-- case: pg_dump's restrict_nonsystem_relation_kind through pg_settings passes
-- user: bob
SELECT set_config(name, 'view, foreign-table', false) FROM pg_settings WHERE name = 'restrict_nonsystem_relation_kind'

-- case: set_config through pg_settings qualified and aliased passes
-- user: bob
SELECT pg_catalog.set_config(s.name, 'on', false) FROM pg_catalog.pg_settings s WHERE s.name = 'Check_Function_Bodies'

-- case: set_config through pg_settings on role is denied
-- user: bob
SELECT set_config(name, 'postgres', false) FROM pg_settings WHERE name = 'role'

-- case: set_config through pg_settings on search_path is denied
-- user: bob
SELECT set_config(name, 'mallory', false) FROM pg_settings WHERE name = 'search_path'

-- case: set_config through pg_settings with another WHERE is denied
-- user: bob
SELECT set_config(name, 'x', false) FROM pg_settings WHERE name = 'application_name' OR name = 'role'

-- case: set_config through pg_settings with a LIKE is denied
-- user: bob
SELECT set_config(name, 'x', false) FROM pg_settings WHERE name LIKE 'rol%'

-- case: set_config through pg_settings reading another column is denied
-- user: bob
SELECT set_config(setting, 'x', false) FROM pg_settings WHERE name = 'application_name'

-- case: set_config through another relation is denied
-- user: bob
SELECT set_config(customer, 'x', false) FROM sales.orders WHERE customer = 'application_name'

-- case: LOCK in ACCESS SHARE MODE on a table the user may select passes
-- user: bob
LOCK TABLE sales.orders IN ACCESS SHARE MODE

-- case: LOCK in ACCESS SHARE MODE NOWAIT, as pg_dump's parallel workers send it
-- user: bob
LOCK TABLE sales.orders IN ACCESS SHARE MODE NOWAIT

-- case: LOCK of an unqualified name is qualified
-- user: bob
-- search_path: sales
LOCK TABLE orders IN ACCESS SHARE MODE

-- case: LOCK of several tables, each allowed
-- user: bob
LOCK TABLE sales.orders, hr.employees IN ACCESS SHARE MODE

-- case: LOCK of a table without select access is denied
-- user: carol
LOCK TABLE sales.orders, hr.employees IN ACCESS SHARE MODE

-- case: LOCK of a table no policy grants is denied
-- user: carol
LOCK TABLE sales.orders, bob.notes IN ACCESS SHARE MODE

-- case: LOCK of a partition maps to its root's resource
-- user: bob
LOCK TABLE sales.orders_2024 IN ACCESS SHARE MODE

-- case: LOCK of a view needs select on the view, not on its tables
-- user: carol
LOCK TABLE hr.directory IN ACCESS SHARE MODE

-- case: LOCK for a superuser passes
-- user: admin
LOCK TABLE hr.employees IN ACCESS SHARE MODE

-- case: LOCK in ROW SHARE MODE is denied
-- user: bob
LOCK TABLE sales.orders IN ROW SHARE MODE

-- case: LOCK in EXCLUSIVE MODE is denied
-- user: bob
LOCK TABLE sales.orders IN EXCLUSIVE MODE

-- case: LOCK in ACCESS EXCLUSIVE MODE is denied even for a superuser
-- user: admin
LOCK TABLE sales.orders IN ACCESS EXCLUSIVE MODE

-- case: LOCK of a catalog relation is denied
-- user: bob
LOCK TABLE pg_catalog.pg_class IN ACCESS SHARE MODE

-- case: LOCK of an unknown table
-- user: bob
LOCK TABLE sales.nosuch IN ACCESS SHARE MODE

-- case: LOCK of a temporary relation finds none
-- user: bob
LOCK TABLE pg_temp.orders IN ACCESS SHARE MODE

-- case: a sequence is read like a table, as pg_dump reads it
-- user: bob
SELECT last_value, is_called FROM sales.orders_id_seq

-- case: a sequence is a resource of its own
-- user: bob
SELECT last_value, is_called FROM hr.employees_id_seq

-- case: pg_dump's COPY of a masked, filtered table
-- user: bob
COPY sales.orders (id, customer, ssn, email, amount, region, order_date) TO stdout;

-- case: pg_dump's COPY of a partition of a masked, filtered partitioned table
-- user: bob
COPY sales.ledger_2024 (id, account, amount, branch) TO stdout;

-- case: pg_dump's COPY of a table with a denied column is denied
-- user: bob
COPY hr.employees (id, name, email, salary, department, hire_date) TO stdout;
