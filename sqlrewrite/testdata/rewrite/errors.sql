-- case: syntax error
SELEC 1

-- case: syntax error at the end
SELECT id FROM

-- case: syntax error in the second statement denies the whole text
SELECT 1; SELECT FROM WHERE

-- case: unterminated string
SELECT 'abc

-- case: unknown relation
SELECT * FROM sales.nosuchtable

-- case: unknown unqualified relation with the default path
SELECT * FROM orders_2025

-- case: unknown schema
SELECT * FROM nosuchschema.orders

-- case: unqualified name not on the search path
SELECT * FROM employees

-- case: an unknown relation in a subquery
SELECT (SELECT 1 FROM sales.nosuchtable)

-- case: an unknown relation in a CTE body
WITH x AS (SELECT 1 FROM nosuch) SELECT 1 FROM x

-- case: a partition child maps to the root's policies
SELECT * FROM sales.orders_2024

-- case: a partition child of a denied table for carol keeps the root's mask
-- user: carol
SELECT id, amount FROM sales.orders_2024 o

-- case: pg_stats is denied
SELECT * FROM pg_stats

-- case: pg_catalog.pg_stats is denied
SELECT * FROM pg_catalog.pg_stats

-- case: pg_stat_user_tables counts hidden rows and is denied by prefix
SELECT relname FROM pg_stat_user_tables

-- case: pg_statio_* is denied by prefix
SELECT relname FROM pg_catalog.pg_statio_user_tables

-- case: pg_locks shows other sessions and is denied
SELECT pid FROM pg_locks

-- case: pg_statistic_ext holds definitions (psql \d) and passes
SELECT stxname FROM pg_statistic_ext

-- case: a denied catalog relation in a subquery of DML is denied
DELETE FROM sales.regions WHERE name IN (SELECT relname FROM pg_stat_user_tables)

-- case: pg_class is allowed
SELECT oid FROM pg_catalog.pg_class

-- case: a pg_temp relation does not exist (none can be created through pgranger)
SELECT * FROM pg_temp.t

-- case: cross-database reference is not supported
SELECT * FROM otherdb.sales.orders

-- case: same-database three-part name is accepted
SELECT id FROM demo.sales.orders

-- case: a denied column error names user, resource and access
SELECT e.salary FROM hr.employees e

-- case: carol's denial names the first column she reads
-- user: carol
SELECT name FROM hr.employees

-- case: the super user reads denied tables
-- user: admin
SELECT salary FROM hr.employees

-- case: eve in analysts reads employees with the custom email mask
-- user: eve
SELECT name, email FROM hr.employees

-- case: relation name with a trailing space is a different relation
SELECT 1 FROM sales."orders "

-- case: TABLE inside an IN subquery
SELECT * FROM sales.orders WHERE (id) IN (TABLE sales.regions)

-- case: nested parentheses within the limit pass
SELECT ((((((((((((((((((((1))))))))))))))))))))

-- case: a child of several inheritance parents is denied
SELECT id FROM sales.orders_multi

-- case: a child of several inheritance parents is denied for alice too
-- user: alice
SELECT id FROM sales.orders_multi

-- case: a row filter reading another table is trusted and not rewritten
-- user: carol
SELECT name FROM sales.regions

-- case: a row filter naming a column its table lacks is refused
-- user: eve
SELECT name FROM sales.regions

-- case: a row filter naming a column its table lacks cannot be fed by the user's query
-- user: eve
SELECT (SELECT count(*) FROM sales.regions) FROM (SELECT 'x' AS dept) s

-- case: parentheses nested deeper than the limit are refused before parsing
SELECT (((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1)))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))

-- case: a rewrite whose rendering would change meaning is refused ((0).f renders as 0.f)
SELECT (0).a FROM hr.employees e

-- case: the same with a quoted field name that reads back as an alias
SELECT (0)."a$" FROM hr.employees e
