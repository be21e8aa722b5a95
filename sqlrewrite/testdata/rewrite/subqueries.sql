-- case: scalar subquery in the SELECT list reads a wrapped table
SELECT r.name, (SELECT max(o.ssn) FROM sales.orders o WHERE o.region = r.region) FROM sales.regions r

-- case: scalar subquery in the SELECT list reads a denied column
SELECT (SELECT max(salary) FROM hr.employees)

-- case: EXISTS subquery on a table carol may not read
-- user: carol
SELECT 1 WHERE EXISTS (SELECT 1 FROM hr.employees)

-- case: EXISTS subquery reads no column but is wrapped
SELECT r.name FROM sales.regions r WHERE EXISTS (SELECT 1 FROM sales.orders o WHERE o.region = r.region)

-- case: IN subquery in WHERE
SELECT id FROM sales.orders WHERE customer IN (SELECT name FROM hr.employees)

-- case: IN subquery on a denied column
SELECT id FROM sales.orders WHERE amount IN (SELECT salary FROM hr.employees)

-- case: ANY subquery with a correlated denied column of the outer query
SELECT e.id FROM hr.employees e WHERE 1 = ANY (SELECT e.salary FROM sales.regions)

-- case: subquery in HAVING
SELECT region, count(*) FROM sales.orders GROUP BY region HAVING count(*) > (SELECT count(*) FROM hr.employees)

-- case: subquery in HAVING reading a denied column
SELECT region FROM sales.orders GROUP BY region HAVING max(amount) > (SELECT avg(salary) FROM hr.employees)

-- case: subquery in FROM reading a wrapped table
SELECT s.ssn FROM (SELECT ssn FROM sales.orders) s

-- case: subquery in FROM exposing a denied column under another name
SELECT s.x FROM (SELECT salary AS x FROM hr.employees) s

-- case: nested subqueries three levels deep
SELECT * FROM (SELECT * FROM (SELECT id, ssn FROM sales.orders) a) b

-- case: correlated unqualified name resolves to the inner table first
SELECT id FROM hr.employees WHERE EXISTS (SELECT 1 FROM sales.orders WHERE email = 'x')

-- case: correlated unqualified name not in the inner table goes to the outer one
SELECT id FROM hr.employees WHERE EXISTS (SELECT 1 FROM sales.regions WHERE salary > 1)

-- case: subquery in ORDER BY
SELECT id FROM sales.orders o ORDER BY (SELECT r.name FROM sales.regions r WHERE r.region = o.region)

-- case: subquery in a CASE expression
SELECT CASE WHEN id > 1 THEN (SELECT name FROM hr.employees LIMIT 1) END FROM sales.orders

-- case: subquery in LIMIT
SELECT id FROM sales.orders LIMIT (SELECT count(*) FROM hr.employees)

-- case: ARRAY subquery
SELECT ARRAY(SELECT ssn FROM sales.orders)

-- case: subquery in a function argument in FROM
SELECT * FROM generate_series(1, (SELECT max(id) FROM sales.orders)) g

-- case: subquery with a schema-qualified correlated reference to the wrapped outer table
SELECT id FROM sales.orders WHERE EXISTS (SELECT 1 FROM sales.regions r WHERE r.region = sales.orders.region)

-- case: schema-qualified correlated reference shadowed by an inner public.orders
SELECT 1 FROM sales.orders WHERE EXISTS (SELECT 1 FROM public.orders WHERE sales.orders.id = 1)

-- case: schema-qualified correlated reference shadowed by an inner alias orders
SELECT 1 FROM sales.orders WHERE EXISTS (SELECT 1 FROM sales.regions orders WHERE sales.orders.region = 'US')
