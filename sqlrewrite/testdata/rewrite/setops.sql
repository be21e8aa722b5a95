-- case: UNION of two governed tables
SELECT email FROM sales.orders UNION SELECT email FROM hr.employees

-- case: UNION ALL with a denied column in the second branch
SELECT id FROM sales.orders UNION ALL SELECT salary FROM hr.employees

-- case: INTERSECT and EXCEPT
SELECT customer FROM sales.orders INTERSECT SELECT name FROM hr.employees EXCEPT SELECT name FROM sales.regions

-- case: ORDER BY and LIMIT on a set operation
SELECT ssn FROM sales.orders UNION SELECT name FROM hr.employees ORDER BY 1 LIMIT 3

-- case: set operation in a subquery
SELECT * FROM (SELECT ssn FROM sales.orders UNION SELECT 'x') u

-- case: VALUES alone is forwarded
VALUES (1, 'a'), (2, 'b')

-- case: VALUES with a subquery reading a wrapped table
VALUES ((SELECT max(ssn) FROM sales.orders))

-- case: VALUES in FROM
SELECT v.a FROM (VALUES (1), (2)) AS v(a)

-- case: VALUES joined with a wrapped table
SELECT o.ssn FROM sales.orders o JOIN (VALUES (1)) AS v(id) ON v.id = o.id

-- case: TABLE of a wrapped table
TABLE sales.orders

-- case: TABLE of a table with a denied column
TABLE hr.employees

-- case: TABLE unqualified with search_path
-- search_path: sales, public
TABLE orders

-- case: TABLE in a UNION
TABLE sales.regions UNION ALL SELECT region, ssn FROM sales.orders

-- case: UNION where a branch has a denied table for carol
-- user: carol
SELECT 1 FROM sales.orders UNION SELECT 1 FROM hr.employees
