-- case: two governed tables joined with aliases
SELECT o.id, e.name FROM sales.orders o JOIN hr.employees e ON e.id = o.id

-- case: a governed table joined with an ungoverned one, unaliased
SELECT orders.ssn, regions.name FROM sales.orders JOIN sales.regions ON regions.region = orders.region

-- case: comma join of sales.orders and public.orders, both unaliased
SELECT 1 FROM sales.orders, public.orders

-- case: comma join of sales.orders and public.orders, columns qualified by schema
SELECT sales.orders.ssn, public.orders.id FROM sales.orders, public.orders

-- case: join of sales.orders and public.orders with schema-qualified ON
SELECT sales.orders.id FROM sales.orders JOIN public.orders ON public.orders.id = sales.orders.id

-- case: self join of a wrapped table with two aliases
SELECT a.ssn, b.ssn FROM sales.orders a JOIN sales.orders b ON a.id = b.id

-- case: a user predicate in ON sees masked values
SELECT a.id FROM sales.orders a JOIN sales.regions r ON a.ssn = r.name

-- case: USING join marks the shared column
SELECT region, o.id FROM sales.orders o JOIN sales.regions USING (region)

-- case: USING join on a denied column is denied
SELECT e.id FROM hr.employees e JOIN hr.employees f USING (salary)

-- case: NATURAL join compares common columns
SELECT o.id FROM sales.orders o NATURAL JOIN sales.regions

-- case: NATURAL join of employees with itself reads salary and is denied
SELECT a.id FROM hr.employees a NATURAL JOIN hr.employees b

-- case: USING join alias
SELECT j.region FROM sales.orders o JOIN sales.regions r USING (region) AS j

-- case: aliased join hides its members
SELECT x.ssn FROM (sales.orders o JOIN sales.regions r USING (region)) AS x

-- case: aliased join, whole row of the join
SELECT x FROM (hr.employees e JOIN sales.regions r ON true) AS x

-- case: LEFT JOIN to a wrapped table
SELECT r.name, o.ssn FROM sales.regions r LEFT JOIN sales.orders o ON o.region = r.region

-- case: FULL JOIN of two wrapped tables
SELECT * FROM sales.orders o FULL JOIN hr.employees e ON o.id = e.id

-- case: CROSS JOIN of employees for carol is denied at table level
-- user: carol
SELECT 1 FROM sales.orders CROSS JOIN hr.employees

-- case: LATERAL subquery referencing a wrapped table
SELECT o.id, l.x FROM sales.orders o, LATERAL (SELECT o.ssn AS x) l

-- case: LATERAL subquery reading a denied column of the outer table
SELECT e.id, l.s FROM hr.employees e, LATERAL (SELECT e.salary AS s) l

-- case: LATERAL subquery that reads a governed table itself
SELECT r.name, l.ssn FROM sales.regions r, LATERAL (SELECT ssn FROM sales.orders o WHERE o.region = r.region LIMIT 1) l

-- case: LATERAL in a JOIN
SELECT r.name, l.c FROM sales.regions r JOIN LATERAL (SELECT count(*) AS c FROM sales.orders o WHERE o.region = r.region) l ON true

-- case: non-lateral subquery cannot see the outer item, unqualified name goes to inner
SELECT s.id FROM hr.employees e, (SELECT id FROM sales.orders) s

-- case: a correlated reference from a LATERAL subquery with an unqualified column
SELECT e.id, l.v FROM hr.employees e, LATERAL (SELECT salary AS v) l

-- case: denied table for carol inside a join
-- user: carol
SELECT o.id FROM sales.orders o JOIN hr.employees e ON e.id = o.id
