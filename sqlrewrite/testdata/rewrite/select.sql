-- case: a masked and filtered table becomes a wrapper with the same name
SELECT id, ssn, amount FROM sales.orders

-- case: an alias is kept on the wrapper
SELECT o.id, o.ssn FROM sales.orders o WHERE o.ssn LIKE '%1'

-- case: an exempt user reads the table unwrapped
-- user: alice
SELECT id, ssn FROM sales.orders

-- case: a super user is not rewritten
-- user: admin
SELECT ssn FROM sales.orders

-- case: unqualified names are resolved and qualified
-- search_path: sales, public
SELECT ssn FROM orders

-- case: a denied column
SELECT salary FROM hr.employees

-- case: catalog queries are forwarded unchanged
SELECT relname FROM pg_class WHERE oid = 1259

-- case: the row filter macro is expanded as an escaped literal
-- user: eve
SELECT id FROM sales.orders
