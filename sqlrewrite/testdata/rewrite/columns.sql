-- case: star on a wrapped table
SELECT * FROM sales.orders

-- case: star on a table with a denied column is denied
SELECT * FROM hr.employees

-- case: star on employees for alice
-- user: alice
SELECT * FROM hr.employees

-- case: allowed columns of employees are wrapped for the custom email mask
SELECT id, name, email FROM hr.employees

-- case: t.star on a table with a denied column is denied
SELECT e.* FROM hr.employees e

-- case: t.star on a wrapped table
SELECT o.* FROM sales.orders o

-- case: whole-row reference to a wrapped table
-- pg: the wrapper's whole row is a record, not the sales.orders composite type
SELECT o FROM sales.orders o

-- case: whole-row reference to a table with a denied column
SELECT e FROM hr.employees e

-- case: whole-row reference by table name unaliased
SELECT employees FROM hr.employees

-- case: row_to_json of a wrapped table
SELECT row_to_json(o) FROM sales.orders o

-- case: row_to_json of a table with a denied column
SELECT row_to_json(e) FROM hr.employees e

-- case: composite field access (o).ssn
SELECT (o).ssn FROM sales.orders o

-- case: composite field access (e).salary is denied
SELECT (e).salary FROM hr.employees e

-- case: composite star (e).*
SELECT (e).* FROM hr.employees e

-- case: count star reads no column
SELECT count(*) FROM hr.employees

-- case: count star of employees for carol is denied
-- user: carol
SELECT count(*) FROM hr.employees

-- case: alias column list renames columns
SELECT x, y FROM sales.orders AS o (x, y)

-- case: alias column list, the renamed denied column
SELECT s FROM hr.employees AS e (i, n, m, s)

-- case: alias column list, the original name is no longer visible
SELECT salary FROM hr.employees AS e (i, n, m, s)

-- case: alias column list, unrenamed columns keep their names
SELECT department FROM hr.employees AS e (i, n)

-- case: partial alias list then the denied column by its own name
SELECT salary FROM hr.employees AS e (i, n)

-- case: 3-part reference to a wrapped unaliased table
SELECT sales.orders.ssn FROM sales.orders

-- case: 4-part reference with the database name
SELECT demo.sales.orders.ssn FROM sales.orders

-- case: 3-part reference to a denied column
SELECT hr.employees.salary FROM hr.employees

-- case: 3-part star
SELECT sales.orders.* FROM sales.orders

-- case: 3-part reference in WHERE and ORDER BY
SELECT id FROM sales.orders WHERE sales.orders.ssn LIKE '%1' ORDER BY sales.orders.id

-- case: 4-part reference with another database name
SELECT other.sales.orders.ssn FROM sales.orders

-- case: 3-part reference when the table is aliased is an error in PostgreSQL
SELECT sales.orders.id FROM sales.orders o

-- case: unqualified reference to a table qualified by name only
SELECT orders.ssn FROM sales.orders

-- case: unknown column name is forwarded (PostgreSQL reports it)
SELECT nosuchcolumn FROM sales.orders

-- case: denied column only in WHERE
SELECT id FROM hr.employees WHERE salary > 100000

-- case: denied column only in ORDER BY
SELECT id FROM hr.employees ORDER BY salary

-- case: denied column in an aggregate
SELECT max(salary) FROM hr.employees

-- case: denied column in GROUP BY
SELECT department FROM hr.employees GROUP BY department, salary

-- case: GROUP BY and ORDER BY ordinal
SELECT region, count(*) FROM sales.orders GROUP BY 1 ORDER BY 2 DESC

-- case: ORDER BY an output alias
SELECT ssn AS s FROM sales.orders ORDER BY s

-- case: ORDER BY an output alias named like a denied column is denied (over-approximation)
SELECT name AS salary FROM hr.employees ORDER BY salary

-- case: window function over a masked column
SELECT id, rank() OVER (PARTITION BY region ORDER BY ssn) FROM sales.orders

-- case: window function over a denied column
SELECT id, rank() OVER (ORDER BY salary) FROM hr.employees

-- case: named window over a denied column
SELECT id, rank() OVER w FROM hr.employees WINDOW w AS (ORDER BY salary)

-- case: DISTINCT ON a denied column
SELECT DISTINCT ON (salary) id FROM hr.employees

-- case: a column reference in a function argument
SELECT lower(email) FROM sales.orders

-- case: carol sees amount as a typed NULL
-- user: carol
SELECT id, amount FROM sales.orders

-- case: upper-case identifiers fold to lower case
SELECT ID, SSN FROM SALES.ORDERS

-- case: quoted mixed-case schema and table do not resolve to sales.orders
SELECT 1 FROM "Sales"."Orders"

-- case: quoted lower-case names resolve
SELECT "ssn" FROM "sales"."orders"

-- case: quoted mixed-case column name is a different column
SELECT "Salary" FROM hr.employees

-- case: unicode-escaped identifiers
SELECT U&"\0073sn" FROM U&"\0073ales".orders

-- case: unicode-escaped identifier of a denied column
SELECT U&"s\0061lary" FROM hr.employees

-- case: quoted table and column names survive the wrapper
SELECT "Id", "select", "e-mail" FROM sales."Odd Orders"

-- case: quoted names with an alias and star
SELECT o.* FROM sales."Odd Orders" o WHERE o."select" = 'a'

-- case: quoted names, unaliased, with a 3-part reference
SELECT sales."Odd Orders"."e-mail" FROM sales."Odd Orders"

-- case: system columns are not in the wrapper
-- pg: fails: the wrapper has no ctid or xmin (column does not exist)
SELECT ctid, xmin FROM sales.orders

-- case: system columns of an unwrapped table pass
-- user: alice
SELECT ctid FROM sales.orders

-- case: parameters are kept
SELECT id FROM sales.orders WHERE ssn = $1 AND id > $2
