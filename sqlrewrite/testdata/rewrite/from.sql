-- case: ONLY on a wrapped table is kept inside the wrapper
SELECT id FROM ONLY sales.orders

-- case: ONLY with an alias
SELECT o.ssn FROM ONLY sales.orders o

-- case: TABLESAMPLE on a wrapped table
SELECT id FROM sales.orders TABLESAMPLE SYSTEM (50) REPEATABLE (7)

-- case: TABLESAMPLE with REPEATABLE and an alias
SELECT o.ssn FROM sales.orders o TABLESAMPLE BERNOULLI (10) REPEATABLE (42)

-- case: TABLESAMPLE on an unwrapped table for alice
-- user: alice
SELECT id FROM sales.orders TABLESAMPLE SYSTEM (50) REPEATABLE (7)

-- case: TABLESAMPLE argument reads a governed table
SELECT 1 FROM sales.regions TABLESAMPLE SYSTEM ((SELECT count(*) FROM hr.employees)) REPEATABLE (0)

-- case: generate_series in FROM
SELECT g FROM generate_series(1, 3) g

-- case: generate_series unaliased
SELECT generate_series FROM generate_series(1, 3)

-- case: function in FROM with a LATERAL reference to a wrapped table
SELECT o.id, g FROM sales.orders o, generate_series(1, o.id) g

-- case: function in FROM with a LATERAL reference to a denied column
SELECT e.id, g FROM hr.employees e, generate_series(1, e.salary) g

-- case: function in FROM with an explicit LATERAL and an unqualified reference
SELECT g FROM hr.employees, LATERAL generate_series(1, salary) g

-- case: unnest of an array built from a wrapped table
SELECT u FROM sales.orders o, unnest(ARRAY[o.ssn, o.email]) u

-- case: ROWS FROM with two functions
SELECT * FROM ROWS FROM (generate_series(1, 2), generate_series(1, 3)) AS r(a, b)

-- case: WITH ORDINALITY
SELECT * FROM generate_series(1, 2) WITH ORDINALITY AS t(v, n)

-- case: a UDF in FROM is denied
SELECT * FROM public.my_function()

-- case: an unknown function in FROM is denied
SELECT * FROM my_function()

-- case: jsonb_to_record with a column definition list
SELECT * FROM jsonb_to_record('{"a": 1}') AS x(a int)

-- case: a subquery alias shadows nothing outside
SELECT x.id FROM (SELECT id FROM sales.orders) x, sales.regions orders

-- case: wrapped table and a subquery both named orders
SELECT 1 FROM sales.orders, (SELECT 1) orders

-- case: an unaliased wrapped table and a CTE of the same name
WITH orders AS (SELECT 1 AS id) SELECT 1 FROM sales.orders, orders

-- case: XMLTABLE in FROM with a governed subquery
SELECT x.a FROM XMLTABLE('/r' PASSING (SELECT xmlforest(ssn) FROM sales.orders LIMIT 1) COLUMNS a text PATH 'a') x

-- case: a partition child is governed by the root's policies
SELECT id, ssn FROM sales.orders_2024

-- case: a foreign table that is a partition is governed by the root's policies
SELECT id, ssn FROM sales.orders_archive

-- case: a foreign table standing alone is a resource of its own
SELECT name, salary FROM hr.employees_remote

-- case: a partition child for carol
-- user: carol
SELECT amount FROM sales.orders_2024

-- case: a partition child for alice
-- user: alice
SELECT ssn FROM sales.orders_2024
