-- case: a CTE body reading sales.orders is wrapped
WITH o AS (SELECT id, ssn FROM sales.orders) SELECT * FROM o

-- case: a CTE named orders shadows sales.orders for unqualified names
-- search_path: sales, public
WITH orders AS (SELECT 1 AS id) SELECT id FROM orders

-- case: a CTE named orders does not shadow the qualified name
WITH orders AS (SELECT 1 AS id) SELECT o.ssn FROM sales.orders o, orders

-- case: a CTE named orders whose body reads sales.orders
-- search_path: sales, public
WITH orders AS (SELECT id, ssn FROM orders) SELECT * FROM orders

-- case: a CTE named employees shadows hr.employees, salary is the CTE column
-- search_path: hr, public
WITH employees AS (SELECT 1 AS salary) SELECT salary FROM employees

-- case: CTE visible in a subquery of the main query
-- search_path: sales, public
WITH orders AS (SELECT 1 AS id) SELECT (SELECT id FROM orders)

-- case: a later CTE sees an earlier one
-- search_path: sales, public
WITH a AS (SELECT id FROM orders), orders AS (SELECT id FROM a) SELECT id FROM orders

-- case: an earlier CTE does not see a later one of the same name
-- search_path: sales, public
WITH a AS (SELECT ssn FROM orders), orders AS (SELECT 1 AS ssn) SELECT * FROM a

-- case: a CTE defined in a subquery does not shadow outside it
-- search_path: sales, public
SELECT ssn FROM orders WHERE EXISTS (WITH orders AS (SELECT 1) SELECT 1 FROM orders)

-- case: a CTE body reading a denied column
WITH e AS (SELECT salary FROM hr.employees) SELECT 1 FROM e

-- case: recursive CTE over a wrapped table
WITH RECURSIVE r(id, ssn) AS (SELECT id, ssn FROM sales.orders WHERE id = 1 UNION ALL SELECT o.id, o.ssn FROM sales.orders o JOIN r ON o.id = r.id + 1) SELECT * FROM r

-- case: recursive CTE named like a table refers to itself
-- search_path: sales, public
WITH RECURSIVE orders(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM orders WHERE n < 3) SELECT n FROM orders

-- case: recursive CTE with SEARCH and CYCLE clauses
WITH RECURSIVE r(id) AS (SELECT id FROM sales.orders UNION ALL SELECT r.id FROM r) SEARCH DEPTH FIRST BY id SET ord CYCLE id SET is_cycle USING path SELECT id FROM r

-- case: data-modifying CTE is denied
WITH d AS (DELETE FROM sales.orders RETURNING id) SELECT * FROM d

-- case: MATERIALIZED CTE
WITH o AS MATERIALIZED (SELECT ssn FROM sales.orders) SELECT ssn FROM o

-- case: CTE whose column list renames a masked column
WITH o(x) AS (SELECT ssn FROM sales.orders) SELECT x FROM o

-- case: CTE in a set operation branch
SELECT 1 UNION ALL (WITH o AS (SELECT id FROM sales.orders) SELECT id FROM o)

-- case: alice reads through a CTE unwrapped
-- user: alice
WITH o AS (SELECT ssn FROM sales.orders) SELECT ssn FROM o
