-- Expression shapes the rewriter renders through pg_query's deparser;
-- TestRewriteGoldenPostgres checks that the deparsed user text returns the
-- same rows as the original.

-- case: string literal forms
SELECT 'a\b', E'x\\y\'z', U&'\0041\+01F600', $$q'q$$, $t$x$t$ FROM sales.orders LIMIT 1

-- case: operator precedence and parentheses
SELECT 10 - (5 - 2), -(-1), NOT (true AND false), 2 ^ 3 ^ 2, (2 ^ 3) ^ 2, - 2 ^ 2, 5 % 3 * 2, 'a' || 'b' COLLATE "C"

-- case: arrays, slices, typed literals
SELECT (ARRAY[1,2,3])[2:3], (ARRAY[[1,2],[3,4]])[2][1], '{1,2}'::int[], interval '1 day', timestamp '2024-01-01 00:00', date '2024-01-01' + 1

-- case: BETWEEN, SIMILAR TO, LIKE with ESCAPE
SELECT 5 BETWEEN SYMMETRIC 10 AND 1, 5 NOT BETWEEN 1 AND 3, 'abc' SIMILAR TO 'a%' ESCAPE '#', 'a_c' LIKE 'a#_c' ESCAPE '#', 'ABC' ILIKE 'abc', 'x' NOT LIKE 'y'

-- case: OVERLAPS, AT TIME ZONE, ANY/ALL, IS DISTINCT FROM
SELECT (DATE '2024-01-01', DATE '2024-02-01') OVERLAPS (DATE '2024-01-15', DATE '2024-03-01'), timestamp '2024-01-01 12:00' AT TIME ZONE 'UTC', 1 = ANY (ARRAY[1,2]), 1 < ALL (ARRAY[2,3]), 1 IS DISTINCT FROM NULL, NULL IS NOT DISTINCT FROM NULL

-- case: IS JSON, NULLIF, COALESCE, GREATEST, CASE, row comparison
SELECT '{"a":1}' IS JSON, '1' IS JSON SCALAR, NULLIF(1, 1), COALESCE(NULL, 2), GREATEST(1, 3, 2), LEAST(1, 3), CASE 1 WHEN 1 THEN 'one' ELSE 'other' END, ROW(1, 'a') = ROW(1, 'a')

-- case: GROUPING and ROLLUP
SELECT region, count(*), GROUPING(region) FROM sales.orders GROUP BY ROLLUP (region)

-- case: window frames and named windows
SELECT id, sum(amount) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE CURRENT ROW), lag(id, 1) OVER w FROM sales.orders WINDOW w AS (PARTITION BY region ORDER BY id)

-- case: SQL-syntax functions (substring, position, overlay, trim, extract)
SELECT substring('hello' FROM 2 FOR 3), position('l' IN 'hello'), overlay('hello' PLACING 'XX' FROM 2 FOR 2), trim(BOTH 'x' FROM 'xhix'), extract(year FROM date '2024-05-01'), EXISTS (SELECT 1), 'a' IN ('a', 'b'), 3 NOT IN (1, 2)

-- case: DISTINCT ON with NULLS LAST
SELECT DISTINCT ON (region) region, id FROM sales.orders ORDER BY region, id DESC NULLS LAST

-- case: FETCH FIRST WITH TIES
SELECT id FROM sales.orders ORDER BY id FETCH FIRST 2 ROWS WITH TIES

-- case: numeric and bit-string constants
SELECT 1::bit(3)::int, B'101' | B'010', X'1F', 1.5e3, -0.0, 'NaN'::float8, 9223372036854775807, -2147483648

-- case: unnest WITH ORDINALITY
SELECT x FROM unnest(ARRAY['b','a']) WITH ORDINALITY AS t(x, n) ORDER BY n

-- case: ordered-set and filtered aggregates
SELECT string_agg(customer, ',' ORDER BY id DESC) FILTER (WHERE id > 1), percentile_cont(0.5) WITHIN GROUP (ORDER BY amount), array_agg(DISTINCT region) FROM sales.orders

-- case: keyword and mixed-case aliases
SELECT "select".x FROM (SELECT 1 AS x) "select", (SELECT 2 AS "Y") "From"

-- case: XML and JSON operators
SELECT xmlelement(name foo, xmlattributes('a' AS b), 'c'), xmlforest(1 AS a), json_build_object('a', 1), '{"a":[1,2]}'::jsonb -> 'a' ->> 1, '{"a":1}'::jsonb @> '{"a":1}'

-- case: casts and typed literals with modifiers
SELECT CAST('1' AS integer), '1'::numeric(5,2), 'x'::varchar(3), 'abc'::char(5) || '|', TIMESTAMP WITH TIME ZONE '2024-01-01 00:00+00', time '10:00' + interval '1 hour'

-- case: boolean precedence, IS TRUE, IS UNKNOWN
SELECT 1 WHERE 'a' = 'a' COLLATE "C" AND 2 > 1 OR NOT 1 = 1 AND true IS TRUE AND NULL IS UNKNOWN

-- case: VALUES with column aliases
SELECT * FROM (VALUES (1, 'a'), (2, NULL)) v(a, b) WHERE b IS NULL OR a = 1

-- case: SQL/JSON constructors and query functions
SELECT json_object('a': 1), json_array(1, 2), JSON_VALUE('{"a":1}'::jsonb, '$.a'), JSON_QUERY('{"a":[1]}'::jsonb, '$.a'), JSON_EXISTS('{"a":1}'::jsonb, '$.a')

-- case: SQL value functions and IS NORMALIZED
SELECT current_date IS NOT NULL, localtime IS NOT NULL, current_timestamp(0) IS NOT NULL, 'x' IS NORMALIZED, normalize('x', NFC)

-- case: nested set operations in IN
SELECT 1 FROM sales.orders o WHERE o.id = 1 OR o.id IN (SELECT 2 UNION SELECT 3 INTERSECT SELECT 3 EXCEPT SELECT 4)

-- case: ORDER BY and LIMIT inside a UNION subquery
SELECT a, b FROM (SELECT 1 a, 2 b UNION ALL SELECT 3, 4 ORDER BY 1 DESC LIMIT 1) x

-- case: recursive CTE with CYCLE
WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) CYCLE n SET c USING p SELECT n, c FROM t

-- case: scalar subqueries in expressions
SELECT (SELECT max(x) FROM generate_series(1, 3) x) + 1, ARRAY(SELECT 1 UNION SELECT 2 ORDER BY 1), - (SELECT 1)

-- case: OPERATOR() precedence
SELECT 'a' < 'b' COLLATE "C", 1 OPERATOR(pg_catalog.+) 2 * 3, (1 OPERATOR(pg_catalog.+) 2) * 3, 2 * 3 OPERATOR(pg_catalog.-) 1
