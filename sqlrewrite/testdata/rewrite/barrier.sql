-- case: plain: a point lookup by key stays a plain subquery (the index is used)
SELECT id, ssn FROM sales.orders WHERE id = 42

-- case: plain: parameters compare with the column's type
SELECT id FROM sales.orders WHERE id = $1 AND region = $2

-- case: plain: an IN list of integers
SELECT id FROM sales.orders WHERE id IN (1, 2, 3)

-- case: plain: a date range on untyped literals
SELECT id FROM sales.orders WHERE order_date BETWEEN '2024-01-01' AND '2024-06-30'

-- case: plain: a bigint literal against an integer key
SELECT id FROM sales.orders WHERE id = 3000000000

-- case: plain: an equality on a masked column compares the masked value
SELECT id FROM sales.orders WHERE ssn = 'xxx-xx-1111'

-- case: plain: a join on a text key with an ungoverned table
SELECT o.id, r.name FROM sales.orders o JOIN sales.regions r ON r.region = o.region WHERE r.name = 'North America'

-- case: plain: IN (SELECT …) becomes a semi-join on a leakproof equality
SELECT o.id FROM sales.orders o WHERE o.region IN (SELECT region FROM sales.regions)

-- case: plain: a leakproof predicate through a subquery in FROM
SELECT s.id FROM (SELECT id, ssn FROM sales.orders) s WHERE s.id = 3

-- case: plain: USING on columns of one type
SELECT o.id FROM sales.orders o JOIN sales.regions USING (region)

-- case: plain: a HAVING term with an aggregate is evaluated on groups
SELECT region, count(*) FROM sales.orders GROUP BY region HAVING count(*) > 1

-- case: guard: an uncorrelated scalar subquery is an initplan, evaluated the first time a row reaches it
SELECT id FROM sales.orders WHERE id = (SELECT r.region FROM sales.regions r LIMIT 1)::int

-- case: guard: a scalar subquery whose type pgranger does not infer
SELECT id FROM sales.orders WHERE id = (SELECT max(id) FROM sales.regions, sales.orders)

-- case: guard: a division that can fail moves inside under the filter
SELECT id FROM sales.orders WHERE 1/(amount - 900) > 0

-- case: guard: numeric comparison is not leakproof in PostgreSQL
SELECT id FROM sales.orders WHERE amount > 1000

-- case: guard: an integer literal against a numeric column
SELECT id FROM sales.orders WHERE amount = 5

-- case: guard: LIKE on a masked column sees the mask inside the wrapper
SELECT id FROM sales.orders o WHERE o.ssn LIKE '%1'

-- case: guard: the leakproof term stays outside, the leaky one moves
SELECT id FROM sales.orders WHERE id = 3 AND lower(customer) = 'ada lovelace'

-- case: guard: a cast that can fail
SELECT id FROM sales.orders WHERE customer::int > 0

-- case: guard: an ON term on the null-extended side of a LEFT JOIN
SELECT r.name, o.id FROM sales.regions r LEFT JOIN sales.orders o ON o.region = r.region AND o.amount > 100

-- case: guard: in an inner join's ON
SELECT o.id FROM sales.orders o JOIN sales.regions r ON r.region = o.region AND o.amount > 100

-- case: guard: inside a sublink's own level
SELECT r.name FROM sales.regions r WHERE r.region IN (SELECT o.region FROM sales.orders o WHERE o.amount > 100)

-- case: guard: with an uncorrelated scalar subquery (an initplan), which moves with it
SELECT o.id FROM sales.orders o WHERE o.amount > (SELECT avg(x.amount) FROM sales.orders x)

-- case: guard: with an uncorrelated EXISTS
SELECT o.id FROM sales.orders o WHERE o.amount > 100 OR EXISTS (SELECT 1 FROM sales.regions r WHERE r.name = 'x')

-- case: fence: a correlated scalar subquery cannot move
SELECT o.id FROM sales.orders o WHERE o.amount > (SELECT count(*) FROM sales.regions r WHERE r.region = o.region)

-- case: fence: x IN (SELECT …) inside an OR has a test expression and cannot move
SELECT o.id FROM sales.orders o WHERE o.amount > 100 OR o.region IN (SELECT r.region FROM sales.regions r)

-- case: guard: two references to one table, each with its own guard
SELECT a.id FROM sales.orders a JOIN sales.orders b ON a.id = b.id WHERE a.amount > 1 AND b.amount < 2

-- case: fence: a leaky join condition reads two FROM items; the key lookup moves into the fence
SELECT o.id FROM sales.orders o JOIN generate_series(0, 0) g ON 1/(o.amount + g) > 0 WHERE o.id = 3

-- case: fence: an ON term on the preserved side of a LEFT JOIN cannot move
SELECT o.id, r.name FROM sales.orders o LEFT JOIN sales.regions r ON r.region = o.region AND o.amount > 100

-- case: fence: a WHERE term on the null-extended side cannot move
SELECT r.name FROM sales.regions r LEFT JOIN sales.orders o ON o.region = r.region WHERE o.amount > 100

-- case: plain: a correlated EXISTS becomes a semi-join on a leakproof equality
SELECT o.id FROM sales.orders o WHERE EXISTS (SELECT 1 FROM sales.regions r WHERE r.region = o.region)

-- case: plain: NOT EXISTS becomes an anti-join
SELECT o.id FROM sales.orders o WHERE NOT EXISTS (SELECT 1 FROM sales.regions r WHERE r.region = o.region AND r.name = 'x')

-- case: fence: a correlated EXISTS that stays a subplan (an aggregate) could run per row of the table
SELECT o.id FROM sales.orders o WHERE EXISTS (SELECT count(*) FROM sales.regions r WHERE r.region = o.region)

-- case: fence: a correlated EXISTS with a leaky term on the table
SELECT o.id FROM sales.orders o WHERE EXISTS (SELECT 1 FROM sales.regions r WHERE r.region = o.region AND o.amount > 1)

-- case: fence: EXISTS under OR stays a subplan
SELECT o.id FROM sales.orders o WHERE o.id = 1 OR EXISTS (SELECT 1 FROM sales.regions r WHERE r.region = o.region)

-- case: fence: a leaky predicate through a subquery in FROM
SELECT s.id FROM (SELECT id, amount FROM sales.orders) s WHERE s.amount > 100

-- case: fence: an equality links a leaky expression to the table's class
SELECT o.id FROM sales.orders o JOIN sales.regions r ON r.region = o.region WHERE r.region = lower(r.name)

-- case: fence: a column-free volatile predicate runs per row
SELECT id FROM sales.orders WHERE random() < 0.5

-- case: fence: a HAVING term without aggregate becomes a WHERE term
SELECT amount FROM sales.orders GROUP BY amount HAVING 1/(amount - 900) > 0

-- case: fence: OR with a leaky term on two tables
SELECT o.id FROM sales.orders o, sales.regions r WHERE o.amount > 1 OR r.name = 'x'

-- case: fence: UPDATE … FROM reads the filtered table at a place pgranger does not model
UPDATE sales.regions r SET name = 'x' FROM sales.orders o WHERE o.region = r.region AND o.id = 1

-- case: masks only: no row filter, no barrier
SELECT id FROM hr.employees WHERE 1/(id - 2) > 0

-- case: fence: a predicate on a LATERAL VALUES column computed from the table
SELECT o.id FROM sales.orders o, LATERAL (VALUES (1/(o.amount - 900))) v(c) WHERE v.c > 0

-- case: fence: a predicate on a LATERAL subquery's column computed from the table
SELECT o.id FROM sales.orders o, LATERAL (SELECT 1/(o.amount - 900) AS c) s WHERE s.c > 0

-- case: fence: a leakproof comparison with a computed column of a subquery is a comparison with the expression
SELECT s.c FROM (SELECT (1/(amount - 900))::int AS c FROM sales.orders) s WHERE s.c = 5

-- case: fence: a computed column of a CTE
WITH c AS (SELECT id, (1/(amount - 900))::int AS r FROM sales.orders) SELECT id FROM c WHERE r = 1

-- case: plain: a computed column the predicate does not read
SELECT s.id FROM (SELECT id, upper(customer) AS u FROM sales.orders) s WHERE s.id = 3

-- case: fence: IN over a computed column
SELECT name FROM sales.regions WHERE region IN (SELECT (1/(amount - 900))::text FROM sales.orders)

-- case: fence: a computed column of a view
SELECT id FROM sales.orders_calc WHERE r = 1

-- case: plain: a view's plain column
SELECT id FROM sales.orders_calc WHERE id = 1

-- case: guard: a filter that is an AND itself (one flat AND is sent)
SELECT "Id" FROM sales."Odd Orders" WHERE 1/("Id" - 5) > 0

-- case: guard: a date column against date + interval (a timestamp) gets a leakproof date bound beside the guard
-- user: frank
SELECT id FROM hr.employees WHERE hire_date >= DATE '1994-01-01' AND hire_date < DATE '1994-01-01' + INTERVAL '1' YEAR

-- case: guard: the timestamp on the left, and BETWEEN timestamps, get date bounds too
-- user: frank
SELECT id FROM hr.employees WHERE DATE '1995-01-01' + INTERVAL '3' MONTH > hire_date AND hire_date BETWEEN TIMESTAMP '1994-01-01 10:00' AND LOCALTIMESTAMP

-- case: guard: equality with a timestamp parameter gets a date equality
-- user: frank
SELECT id FROM hr.employees WHERE hire_date = $1::timestamp

-- case: guard: no date bound for a timestamptz or a volatile right side
-- user: frank
SELECT e.id FROM hr.employees e WHERE e.hire_date < now() AND e.hire_date < DATE '2000-01-01' + random() * INTERVAL '1 day'

-- case: guard: no date bound for a masked date column
SELECT id FROM sales.orders WHERE order_date < DATE '2000-01-01' + INTERVAL '1' DAY

-- case: guard: comparisons that select hidden rows decide whether an uncorrelated subquery runs (an initplan, evaluated the first time a row reaches it)
SELECT count(*) FROM sales.orders WHERE customer > 'Bruno' AND customer < 'Bruno Z' AND id <> (SELECT (1/(count(*)-count(*)))::int FROM pg_catalog.pg_class)

-- case: guard: an uncorrelated EXISTS in an OR is an initplan too
SELECT count(*) FROM sales.orders WHERE region = 'EU' OR EXISTS (SELECT 1 FROM sales.regions WHERE 1/(length(name) - length(name)) = 1)

-- case: guard: a column-free stable function in a CASE arm is evaluated per row
SELECT count(*) FROM sales.orders WHERE CASE WHEN id >= 950 THEN pg_catalog.current_setting('no.such') = 'x' ELSE false END

-- case: guard: a conjunct without columns is a one-time filter, run once per child scan and per parallel process: it moves under the filter too
SELECT count(*) FROM sales.orders WHERE customer > 'Bruno' AND has_table_privilege('no_such', 'sales.orders', 'select')

-- case: guard: a stable function without column inputs, evaluated per row in a CASE arm
SELECT count(*) FROM sales.orders WHERE CASE WHEN customer > 'Bruno' THEN has_table_privilege('no_such', 'sales.orders', 'select') ELSE false END

-- case: guard: to_date is stable, and fails on its input
SELECT count(*) FROM sales.orders WHERE customer > 'Bruno' AND (pg_catalog.to_date('x', 'YYYY') IS NOT NULL OR id = 1)

-- case: guard: a cast of a value fixed for the statement can fail on every row
SELECT count(*) FROM sales.orders WHERE customer > 'Bruno' AND (LOCALTIMESTAMP::text::int > 0 OR id = 1)

-- case: guard: a division by a stable expression
SELECT count(*) FROM sales.orders WHERE customer > 'Bruno' AND 1/(pg_catalog.pg_backend_pid() - pg_catalog.pg_backend_pid()) = id

-- case: guard: a notice from a stable function
SELECT count(*) FROM sales.orders WHERE customer > 'Bruno' AND (pg_catalog.plainto_tsquery('the') IS NULL OR id > 0)

-- case: guard: a cast to the same type with a type modifier can fail (numeric(4,0) of a large value)
SELECT count(*) FROM sales.orders WHERE id::numeric(4,0) > 0

-- case: guard: a length coercion of text rounds nothing but is a function
SELECT count(*) FROM sales.orders WHERE customer::varchar(3) = 'Bru'

-- case: plain: a constant folded at plan time may raise only there
SELECT count(*) FROM sales.orders WHERE id = 10/2 AND order_date < DATE '2024-01-01' + 30

-- case: plain: CURRENT_DATE is a value fixed for the statement
SELECT count(*) FROM sales.orders WHERE order_date < CURRENT_DATE

-- case: plain: an undeclared parameter cast to a type is a parameter of that type
SELECT count(*) FROM sales.orders WHERE id = $1::int

-- case: plain: COALESCE of one type over leakproof comparisons
SELECT count(*) FROM sales.orders WHERE COALESCE(customer, 'x') = 'Bruno'

-- case: guard: an operator applied to a parameter is evaluated per row (a generic plan does not fold it)
SELECT count(*) FROM sales.orders WHERE id = $1::int + 1

-- case: guard: an uncorrelated EXISTS is an initplan, not a semi-join (PostgreSQL pulls up only an EXISTS whose WHERE reads the enclosing level)
SELECT count(*) FROM sales.orders WHERE id = 2 AND EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE 1/(c.relnatts - c.relnatts) = 1)
