-- case: PREPARE and EXECUTE in one text: EXECUTE runs the statement rewritten now
PREPARE p (int) AS SELECT id, ssn FROM sales.orders WHERE id = $1; EXECUTE p(1)

-- case: EXECUTE with an undeclared parameter takes the argument's type
PREPARE p AS SELECT $1, region FROM sales.regions WHERE name = $2; EXECUTE p(1, 'x')

-- case: PREPARE of a denied column is denied at PREPARE
PREPARE p AS SELECT salary FROM hr.employees

-- case: PREPARE of a denied function is denied
PREPARE p AS SELECT pg_read_file($1)

-- case: PREPARE resolves names with the search_path of the PREPARE
-- search_path: sales
PREPARE p AS SELECT name FROM regions; SET search_path = public; EXECUTE p

-- case: EXECUTE with the wrong number of parameters
PREPARE p (int) AS SELECT $1; EXECUTE p(1, 2)

-- case: EXECUTE of an unknown name is refused
EXECUTE nothing

-- case: DEALLOCATE drops the prepared statement and its placeholder
PREPARE p AS SELECT 1; DEALLOCATE p; EXECUTE p

-- case: DEALLOCATE of a name not prepared with SQL passes
DEALLOCATE stmtcache_1

-- case: DEALLOCATE ALL drops every prepared statement
PREPARE p AS SELECT 1; DEALLOCATE ALL; EXECUTE p

-- case: PREPARE of a name already prepared with another statement
PREPARE p AS SELECT 1; PREPARE p AS SELECT 2

-- case: EXECUTE arguments with subqueries are rewritten too
PREPARE p (text) AS SELECT $1; EXECUTE p((SELECT ssn FROM sales.orders LIMIT 1))

-- case: PREPARE of DML follows the DML rules
PREPARE d AS DELETE FROM sales.orders WHERE id = $1

-- case: PREPARE of DML on an ungoverned table
PREPARE d (text) AS UPDATE sales.regions SET name = $1 WHERE region = 'US' RETURNING name; EXECUTE d('x')

-- case: apply: PREPARE of DML through the view
-- options: apply
PREPARE d (int) AS UPDATE sales.orders SET amount = 0 WHERE id = $1; EXECUTE d(1)

-- case: EXPLAIN EXECUTE of a row-filtered statement is denied
PREPARE p AS SELECT id FROM sales.orders; EXPLAIN EXECUTE p

-- case: EXPLAIN EXECUTE of an ungoverned statement
PREPARE p AS SELECT region FROM sales.regions; EXPLAIN EXECUTE p

-- case: CREATE TABLE AS EXECUTE
-- options: ddl
PREPARE p AS SELECT id, ssn FROM sales.orders; CREATE TABLE bob.x AS EXECUTE p

-- case: DISCARD ALL drops prepared statements
PREPARE p AS SELECT 1; DISCARD ALL; EXECUTE p

-- case: PREPARE of SELECT INTO is denied
-- options: ddl
PREPARE p AS SELECT 1 INTO bob.x

-- case: a bare parameter keeps its output name
PREPARE p (int) AS SELECT $1, $1 + 1 AS next; EXECUTE p(41)

-- case: DEALLOCATE of a SQL-prepared statement names its placeholder
PREPARE p AS SELECT 1; DEALLOCATE p

-- case: arguments keep their precedence
PREPARE p AS SELECT $1 * 3, -$2; EXECUTE p(1 + 2, 4 - 5)
