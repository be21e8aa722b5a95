-- case: a view is expanded so the masks and the row filter of its table apply
SELECT id, ssn FROM sales.orders_view

-- case: an alias on a view is kept
SELECT v.ssn FROM sales.orders_view AS v WHERE v.id = 1

-- case: an exempt user reads the view's definition without wrappers
-- user: alice
SELECT id, ssn FROM sales.orders_view

-- case: a super user reads the view itself
-- user: admin
SELECT id, ssn FROM sales.orders_view

-- case: a view in a subquery is expanded too
SELECT id FROM sales.orders WHERE id IN (SELECT id FROM sales.orders_view)

-- case: a view read by star
SELECT * FROM sales.orders_view

-- case: a user CTE named like the view's table does not capture the view's reference
WITH orders AS (SELECT 1 AS id) SELECT v.id FROM sales.orders_view v, orders

-- case: a view over a table the user is denied: the view grants access, the table's mask still applies
-- user: carol
SELECT id, name, email FROM hr.directory

-- case: without a grant on the view it is denied like a table
SELECT name FROM hr.directory
