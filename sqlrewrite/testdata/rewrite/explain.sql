-- case: EXPLAIN of a table without policies for the user is forwarded
EXPLAIN SELECT * FROM sales.regions

-- case: EXPLAIN ANALYZE of a masked-only table shows the rewrite
-- user: bob
EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON) SELECT email FROM hr.employees

-- case: EXPLAIN of a row-filtered table is denied
EXPLAIN SELECT id FROM sales.orders WHERE id = 1

-- case: EXPLAIN ANALYZE of a row-filtered table is denied
EXPLAIN ANALYZE SELECT count(*) FROM sales.orders WHERE amount > 1000

-- case: EXPLAIN of a view over a row-filtered table is denied
-- user: bob
EXPLAIN SELECT * FROM sales.orders_view

-- case: EXPLAIN of a row-filtered table in a subquery is denied
EXPLAIN SELECT 1 WHERE EXISTS (SELECT 1 FROM sales.orders)

-- case: EXPLAIN of a denied column is denied as the query is
EXPLAIN SELECT salary FROM hr.employees

-- case: EXPLAIN for a super user passes
-- user: admin
EXPLAIN ANALYZE SELECT * FROM sales.orders

-- case: EXPLAIN ANALYZE of DML follows the DML rules
EXPLAIN ANALYZE DELETE FROM sales.orders

-- case: EXPLAIN ANALYZE of DML on an ungoverned table
EXPLAIN ANALYZE UPDATE sales.regions SET name = name

-- case: EXPLAIN of CREATE TABLE AS needs allow-ddl
EXPLAIN ANALYZE CREATE TABLE bob.x AS SELECT 1

-- case: EXPLAIN of CREATE TABLE AS with allow-ddl
-- options: ddl
EXPLAIN CREATE TABLE bob.x AS SELECT region FROM sales.regions

-- case: EXPLAIN of DECLARE is denied
EXPLAIN DECLARE c CURSOR FOR SELECT 1

-- case: EXPLAIN of a statement with a denied function is denied
EXPLAIN SELECT pg_read_file('/etc/passwd')

-- case: EXPLAIN of a carol query (row filter reading another table) is denied
-- user: carol
EXPLAIN SELECT * FROM sales.regions

-- case: EXPLAIN of the apply-mode DML view is denied (it has the row filter)
-- options: apply
EXPLAIN UPDATE sales.orders SET amount = 0
