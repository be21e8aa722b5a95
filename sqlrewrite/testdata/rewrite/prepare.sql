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

-- case: an argument is evaluated in no table's scope: a column reference names nothing
PREPARE p (text) AS SELECT id FROM sales.accounts WHERE owner = $1; EXECUTE p(owner)

-- case: a qualified column reference in an argument names no table
PREPARE p (text) AS SELECT id FROM sales.accounts WHERE owner = $1; EXECUTE p(accounts.owner)

-- case: a schema-qualified column reference in an argument
PREPARE p (text) AS SELECT id FROM sales.accounts WHERE owner = $1; EXECUTE p(sales.accounts.owner)

-- case: a column reference inside a function call in an argument
PREPARE p (text) AS SELECT id FROM sales.accounts WHERE owner = $1; EXECUTE p(lower(owner))

-- case: a column reference of another database in an argument
PREPARE p (text) AS SELECT $1; EXECUTE p(otherdb.sales.accounts.owner)

-- case: a subquery in an argument is refused, as PostgreSQL refuses it
PREPARE p (text) AS SELECT $1; EXECUTE p((SELECT ssn FROM sales.orders LIMIT 1))

-- case: an EXISTS subquery in an argument is refused
PREPARE p (boolean) AS SELECT $1; EXECUTE p(EXISTS (SELECT 1 FROM sales.orders))

-- case: a parameter in an argument names nothing
PREPARE p (text) AS SELECT $1; EXECUTE p($1)

-- case: an expression argument is evaluated once, apart from the statement
PREPARE p (text) AS SELECT id FROM sales.accounts WHERE owner = $1 OR note = $1; EXECUTE p('a' || 'b')

-- case: an integer expression argument
PREPARE p (int) AS SELECT id FROM sales.accounts WHERE id = $1; EXECUTE p(1 + 1)

-- case: constants and expressions together, used in a subquery and a CTE
PREPARE p (int, text, date) AS WITH o AS (SELECT id FROM sales.orders WHERE order_date > $3) SELECT id, $2 FROM o WHERE id IN (SELECT $1 + id FROM sales.regions r, o x WHERE x.id = $1); EXECUTE p(abs(-2), 'x', current_date)

-- case: a volatile argument is evaluated once
PREPARE p (double precision) AS SELECT $1 = $1 AS same, $1 AS v FROM sales.regions; EXECUTE p(random())

-- case: aggregates, window and set-returning functions in an argument are refused where it is evaluated
PREPARE p (bigint) AS SELECT id FROM sales.regions WHERE $1 > 0; EXECUTE p(count(*))

-- case: a denied function in an argument is denied
PREPARE p (text) AS SELECT $1; EXECUTE p(pg_read_file('/etc/passwd'))

-- case: a declared type's modifiers are not applied to the argument, as in PostgreSQL
PREPARE p (varchar(3), char(2), numeric(5,2)) AS SELECT $1, $2, $3; EXECUTE p('abcdef', 'abcdef', 1.234)

-- case: the arguments' CTE takes a name the statement does not use
PREPARE p (text) AS WITH pgranger_args AS (SELECT name FROM sales.regions) SELECT name FROM pgranger_args WHERE name = $1; EXECUTE p(lower('X'))

-- case: DML with an expression argument
PREPARE d (text) AS UPDATE sales.regions SET name = $1 WHERE region = 'US' RETURNING name; EXECUTE d(upper('x'))

-- case: ON CONFLICT inference takes the argument itself
-- options: ddl
PREPARE d (int) AS INSERT INTO bob.notes VALUES ($1) ON CONFLICT (id) WHERE id > $1 DO NOTHING; EXECUTE d(1 + 1)
