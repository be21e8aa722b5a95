-- case: INSERT into a table with no policy for the user needs update access
-- user: carol
INSERT INTO bob.notes (id) VALUES (1)

-- case: INSERT into the user's own table is qualified and forwarded
INSERT INTO notes (id) VALUES (1)

-- case: INSERT without update access is denied naming the table
-- user: dave
INSERT INTO public.orders VALUES (1)

-- case: INSERT … SELECT reads the source through its wrapper (masked, filtered)
-- user: bob
INSERT INTO bob.notes (id) SELECT length(ssn) FROM sales.orders

-- case: INSERT … SELECT from a denied column is denied
INSERT INTO bob.notes (id) SELECT salary FROM hr.employees

-- case: INSERT into a row-filtered and masked table is denied by default
INSERT INTO sales.orders (id, customer, region) VALUES (100, 'x', 'US')

-- case: UPDATE of a row-filtered table is denied by default
UPDATE sales.orders SET amount = 0 WHERE id = 1

-- case: DELETE of a row-filtered table is denied by default
DELETE FROM sales.orders WHERE id = 1

-- case: MERGE into a row-filtered table is denied by default
MERGE INTO sales.orders o USING sales.regions r ON o.region = r.region WHEN MATCHED THEN DELETE

-- case: UPDATE of a table with masks only is denied by default
UPDATE hr.employees SET department = 'x' WHERE id = 1

-- case: UPDATE of a table without policies for the user is qualified and forwarded
-- search_path: sales
UPDATE regions SET name = upper(name) WHERE region = 'US'

-- case: UPDATE … FROM reads the other table through its wrapper
UPDATE sales.regions r SET name = o.customer FROM sales.orders o WHERE o.region = r.region

-- case: UPDATE SET a column the user may not update is denied
-- options: apply
UPDATE hr.employees SET salary = 1

-- case: DELETE … USING with a subquery reading a masked table
DELETE FROM sales.regions WHERE region IN (SELECT region FROM sales.orders WHERE ssn LIKE '%1')

-- case: DELETE reading a denied column in WHERE is denied
DELETE FROM sales.regions WHERE region IN (SELECT department FROM hr.employees WHERE salary > 0)

-- case: RETURNING reads target columns (select access needed)
DELETE FROM sales.regions WHERE region = 'US' RETURNING region, name

-- case: RETURNING a column the user may not select is denied
-- options: apply
UPDATE hr.employees SET department = 'x' RETURNING salary

-- case: WHERE on a column the user may not select is denied
-- options: apply
DELETE FROM hr.employees WHERE salary > 100000

-- case: WITH … DELETE … RETURNING in a data-modifying CTE
WITH gone AS (DELETE FROM sales.regions WHERE region = 'EU' RETURNING region) SELECT count(*) FROM gone

-- case: a data-modifying CTE on a filtered table is denied by default
WITH gone AS (DELETE FROM sales.orders RETURNING id) SELECT count(*) FROM gone

-- case: WITH … INSERT with a CTE reading a masked table
WITH src AS (SELECT id FROM sales.orders) INSERT INTO bob.notes SELECT id FROM src

-- case: INSERT ON CONFLICT DO UPDATE writes and reads the target, EXCLUDED is the new row
INSERT INTO sales.regions AS r VALUES ('US', 'x') ON CONFLICT (region) DO UPDATE SET name = excluded.name WHERE r.name <> excluded.name

-- case: INSERT into a view is denied
INSERT INTO sales.orders_view (id) VALUES (1)

-- case: INSERT into a system catalog is denied
INSERT INTO pg_catalog.pg_class (oid) VALUES (1)

-- case: INSERT into a partition takes the root's policies
INSERT INTO sales.orders_2024 (id, customer, region) VALUES (1, 'x', 'US')

-- case: a CTE name does not shadow an INSERT target
-- search_path: sales
WITH regions AS (SELECT 1) INSERT INTO regions (region) VALUES ('x')

-- case: COPY FROM STDIN needs update access on the table and loaded columns
COPY sales.regions (region, name) FROM STDIN

-- case: COPY FROM STDIN into a filtered table is denied by default
COPY sales.orders FROM STDIN

-- case: COPY FROM STDIN WHERE reads the loaded rows, not stored ones
COPY sales.regions FROM STDIN WHERE region <> 'x'

-- case: COPY FROM STDIN without update access is denied
-- user: dave
COPY public.orders FROM STDIN

-- case: COPY FROM a server file is denied
COPY sales.regions FROM '/etc/passwd'

-- case: UPDATE with WHERE CURRENT OF on an ungoverned target is forwarded
UPDATE sales.regions SET name = 'x' WHERE CURRENT OF c

-- case: super users write without checks
-- user: admin
UPDATE sales.orders SET ssn = NULL

-- case: apply: UPDATE of a row-filtered table goes through a security-barrier view with CHECK OPTION
-- options: apply
UPDATE sales.orders SET amount = 0 WHERE id = 1

-- case: apply: DELETE keeps non-leakproof predicates above the filter
-- options: apply
DELETE FROM sales.orders o WHERE 1 / (o.amount - 830) > 0

-- case: apply: INSERT is checked against the filter
-- options: apply
INSERT INTO sales.orders (id, customer, region) VALUES (100, 'x', 'US')

-- case: apply: INSERT ON CONFLICT through the view
-- options: apply
INSERT INTO sales.orders (id, customer, region) VALUES (100, 'x', 'US') ON CONFLICT (id) DO NOTHING

-- case: apply: masked target columns read masked values in WHERE and RETURNING
-- options: apply
UPDATE sales.orders SET amount = amount + 1 WHERE ssn LIKE '%1' RETURNING id, ssn, upper(email) AS e

-- case: apply: a qualified masked column in RETURNING is masked
-- options: apply
DELETE FROM sales.orders o WHERE o.id = 1 RETURNING o.ssn, o.order_date

-- case: apply: schema-qualified target columns are kept on the view
-- options: apply
UPDATE sales.orders SET amount = 1 WHERE sales.orders.id = 1 RETURNING sales.orders.id

-- case: apply: RETURNING * of a masked target is refused
-- options: apply
DELETE FROM sales.orders RETURNING *

-- case: apply: a correlated reference to a masked target column is masked
-- options: apply
UPDATE sales.orders o SET amount = 1 WHERE EXISTS (SELECT 1 FROM sales.regions r WHERE r.name = o.ssn)

-- case: apply: masks only (no filter) read masked, no view
-- options: apply
UPDATE hr.employees SET department = 'x' WHERE email LIKE 'm%' RETURNING email

-- case: apply: CUSTOM mask in RETURNING is qualified
-- options: apply
DELETE FROM hr.employees e WHERE id = 3 RETURNING e.email

-- case: apply: writing a masked column is allowed (the value written is the user's)
-- options: apply
UPDATE hr.employees SET email = 'new@example.com' WHERE id = 1

-- case: apply: MERGE into a filtered table is still denied
-- options: apply
MERGE INTO sales.orders o USING sales.regions r ON o.region = r.region WHEN MATCHED THEN DELETE

-- case: apply: MERGE into an ungoverned table reads the source through its wrapper
-- options: apply
MERGE INTO sales.regions r USING sales.orders o ON o.region = r.region WHEN MATCHED THEN UPDATE SET name = o.customer WHEN NOT MATCHED THEN INSERT VALUES (o.region, o.ssn)

-- case: apply: COPY FROM into a filtered table is still denied
-- options: apply
COPY sales.orders FROM STDIN

-- case: apply: COPY FROM into a masked-only table is allowed
-- options: apply
COPY hr.employees (id, name) FROM STDIN

-- case: apply: WHERE CURRENT OF on a filtered table is denied
-- options: apply
UPDATE sales.orders SET amount = 0 WHERE CURRENT OF c

-- case: apply: a data-modifying CTE on a filtered table goes through the view
-- options: apply
WITH gone AS (DELETE FROM sales.orders WHERE id = 1 RETURNING id) SELECT count(*) FROM gone

-- case: apply: quoted names and a filter and mask for everyone
-- options: apply
-- user: carol
UPDATE sales."Odd Orders" SET "select" = 'y' WHERE "Id" = 1 RETURNING "e-mail"

-- case: apply: UPDATE ONLY keeps ONLY inside the view
-- options: apply
UPDATE ONLY sales.orders SET amount = 0

-- case: apply: RETURNING of a masked column keeps the column's name in a data-modifying CTE
-- options: apply
WITH changed AS (UPDATE sales.orders SET amount = 1 WHERE id = 1 RETURNING ssn) SELECT ssn FROM changed

-- case: apply: INSERT … SELECT from the same filtered table
-- options: apply
INSERT INTO sales.orders (id, customer, region) SELECT id + 100, customer, region FROM sales.orders

-- case: apply: UPDATE of a row-filtered partition through its own view
-- options: apply
UPDATE sales.orders_2024 SET amount = 0 WHERE id = 9

-- case: a restricted column read in an ON CONFLICT clause is denied
-- options: apply
INSERT INTO hr.employees (id, name) VALUES (1, 'x') ON CONFLICT (id) DO UPDATE SET name = 'y' WHERE hr.employees.salary > 0

-- case: TRUNCATE needs policy.allow-ddl
TRUNCATE sales.regions
