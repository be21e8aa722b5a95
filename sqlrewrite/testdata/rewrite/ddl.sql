-- case: CREATE TABLE needs policy.allow-ddl
CREATE TABLE bob.t (a int)

-- case: CREATE TABLE with create access on the new table
-- options: ddl
CREATE TABLE bob.t (a int PRIMARY KEY, b text DEFAULT lower('X') CHECK (b <> ''))

-- case: CREATE TABLE unqualified goes to the first existing schema of the path
-- options: ddl
-- search_path: $user, public
CREATE TABLE t (a int)

-- case: CREATE TABLE with pg_temp first on the path would be temporary
-- options: ddl
-- search_path: pg_temp, bob
CREATE TABLE t (a int)

-- case: CREATE TABLE without create access is denied
-- options: ddl
CREATE TABLE sales.t (a int)

-- case: CREATE TEMP TABLE is denied even with allow-ddl
-- options: ddl
CREATE TEMP TABLE t (a int)

-- case: CREATE TABLE in pg_temp is denied
-- options: ddl
CREATE TABLE pg_temp.orders (id int)

-- case: CREATE TABLE … PARTITION OF is denied
-- options: ddl
CREATE TABLE bob.p1 PARTITION OF bob.notes FOR VALUES IN (1)

-- case: CREATE TABLE with a default calling a denied function is denied
-- options: ddl
CREATE TABLE bob.t (a text DEFAULT pg_read_file('/etc/passwd'))

-- case: a foreign key to a row-filtered table is denied (its checks reveal hidden rows)
-- options: ddl
CREATE TABLE bob.t (order_id int REFERENCES sales.orders (id))

-- case: a foreign key to a readable table is allowed
-- options: ddl
CREATE TABLE bob.t (region text REFERENCES sales.regions (region))

-- case: a foreign key to a column the user may not read is denied
-- options: ddl
CREATE TABLE bob.t (s int, FOREIGN KEY (s) REFERENCES hr.employees (salary))

-- case: CREATE TABLE … LIKE needs select on the source
-- options: ddl
CREATE TABLE bob.t (LIKE sales.regions)

-- case: CREATE TABLE AS needs create and rewrites its query
-- options: ddl
CREATE TABLE bob.copy AS SELECT id, ssn FROM sales.orders

-- case: CREATE TABLE AS over a denied column is denied
-- options: ddl
CREATE TABLE bob.copy AS SELECT salary FROM hr.employees

-- case: CREATE TABLE AS without create access is denied
-- options: ddl
CREATE TABLE sales.copy AS SELECT 1

-- case: SELECT INTO is CREATE TABLE AS
-- options: ddl
SELECT id, ssn INTO bob.copy FROM sales.orders

-- case: SELECT INTO in a set operation
-- options: ddl
SELECT id INTO bob.copy FROM sales.orders UNION SELECT id FROM public.orders

-- case: SELECT INTO a temporary table is denied
-- options: ddl
SELECT 1 AS a INTO TEMP t

-- case: CREATE MATERIALIZED VIEW is denied even with allow-ddl
-- options: ddl
CREATE MATERIALIZED VIEW bob.mv AS SELECT 1

-- case: CREATE VIEW is denied even with allow-ddl
-- options: ddl
CREATE VIEW bob.v AS SELECT id FROM bob.notes

-- case: DROP TABLE needs drop access and is qualified
-- options: ddl
-- search_path: $user
DROP TABLE notes

-- case: DROP TABLE without drop access is denied
-- options: ddl
DROP TABLE public.orders

-- case: DROP TABLE IF EXISTS of a missing table passes
-- options: ddl
DROP TABLE IF EXISTS bob.nothing

-- case: DROP TABLE IF EXISTS of a missing table needs drop access on its name
-- options: ddl
DROP TABLE IF EXISTS sales.nothing

-- case: ALTER TABLE IF EXISTS of a missing table needs alter access on its name in every schema of the path
-- options: ddl
-- search_path: bob, public
ALTER TABLE IF EXISTS nothing ADD COLUMN x int

-- case: DROP TABLE CASCADE is denied
-- options: ddl
DROP TABLE bob.notes CASCADE

-- case: DROP of a view needs drop access on the view
-- options: ddl
DROP VIEW sales.orders_view

-- case: DROP SCHEMA is denied
-- options: ddl
DROP SCHEMA bob

-- case: DROP TABLE naming a view is denied
-- options: ddl
DROP TABLE sales.orders_view

-- case: TRUNCATE needs update access
-- options: ddl
TRUNCATE sales.regions

-- case: TRUNCATE of a row-filtered table is denied
-- options: ddl
TRUNCATE sales.orders

-- case: TRUNCATE of a row-filtered table is denied in apply mode too
-- options: ddl, apply
TRUNCATE sales.orders

-- case: TRUNCATE CASCADE is denied
-- options: ddl
TRUNCATE bob.notes CASCADE

-- case: ALTER TABLE ADD COLUMN needs alter access
-- options: ddl
ALTER TABLE bob.notes ADD COLUMN note text DEFAULT 'x'

-- case: ALTER TABLE of a filtered table is denied (Hive blocks ALTER)
-- options: ddl
ALTER TABLE sales.orders ADD COLUMN x int

-- case: ALTER TABLE of a masked table is denied even in apply mode
-- options: ddl, apply
ALTER TABLE hr.employees ADD COLUMN x int

-- case: ALTER TABLE of an ungoverned table with a denied subcommand
-- options: ddl
ALTER TABLE bob.notes OWNER TO postgres

-- case: ALTER TABLE DISABLE ROW LEVEL SECURITY is denied
-- options: ddl
ALTER TABLE bob.notes DISABLE ROW LEVEL SECURITY

-- case: ALTER TABLE ATTACH PARTITION is denied
-- options: ddl
ALTER TABLE bob.notes ATTACH PARTITION bob.p FOR VALUES IN (1)

-- case: ALTER TABLE SET SCHEMA is denied
-- options: ddl
ALTER TABLE bob.notes SET SCHEMA public

-- case: ALTER TABLE ALTER TYPE USING reads the column
-- options: ddl
ALTER TABLE sales.regions ALTER COLUMN name TYPE varchar(10) USING substr(name, 1, 10)

-- case: ALTER TABLE ADD CHECK validates stored rows (select access on what it reads)
-- options: ddl
ALTER TABLE sales.regions ADD CONSTRAINT c CHECK (name <> '')

-- case: ALTER TABLE of a table the user may not alter is denied
-- options: ddl
ALTER TABLE public.orders ADD COLUMN x int

-- case: ALTER TABLE RENAME needs alter and create on the new name
-- options: ddl
ALTER TABLE bob.notes RENAME TO notes2

-- case: ALTER TABLE RENAME into a schema without create access is denied
-- options: ddl
ALTER TABLE sales.regions RENAME TO regions2

-- case: ALTER TABLE RENAME COLUMN
-- options: ddl
ALTER TABLE sales.regions RENAME COLUMN name TO label

-- case: ALTER VIEW is denied
-- options: ddl
ALTER VIEW sales.orders_view RENAME TO v2

-- case: CREATE INDEX needs index access and select on its columns
-- options: ddl
CREATE INDEX ON sales.regions (lower(name)) WHERE region <> ''

-- case: CREATE INDEX on a filtered table is denied
-- options: ddl
CREATE UNIQUE INDEX ON sales.orders (ssn)

-- case: REFRESH MATERIALIZED VIEW of a table is denied
-- options: ddl
REFRESH MATERIALIZED VIEW sales.regions

-- case: CREATE SCHEMA is denied
-- options: ddl
CREATE SCHEMA x

-- case: a partition key expression follows the function rule
-- options: ddl
CREATE TABLE bob.pt (a text) PARTITION BY LIST (public.bucket(a))

-- case: a partitioned table with a built-in key
-- options: ddl
CREATE TABLE bob.pt (a text) PARTITION BY LIST (lower(a))
