-- case: allowed built-ins are qualified with pg_catalog
-- search_path: sales, public
SELECT lower(customer), length(ssn) FROM orders

-- case: allowed built-ins are qualified with pg_catalog with the default path too
SELECT lower(customer) FROM sales.orders

-- case: allowed built-ins are qualified with pg_catalog with pg_catalog first in the path
-- search_path: pg_catalog, sales
SELECT upper(customer) FROM orders

-- case: a built-in name is called as pg_catalog's, never an overload in another schema
SELECT lower(id) FROM sales.regions r, public.orders o

-- case: allowed built-ins in a statement reading no table
SELECT now(), version()

-- case: already qualified pg_catalog function
SELECT pg_catalog.lower(customer) FROM sales.orders

-- case: aggregates and window functions
SELECT region, sum(amount), row_number() OVER (ORDER BY region) FROM sales.orders GROUP BY region

-- case: query_to_xml runs a query string and is denied
SELECT query_to_xml('SELECT ssn FROM sales.orders', true, false, '')

-- case: table_to_xml is denied
SELECT table_to_xml('sales.orders', true, false, '')

-- case: cursor_to_xml is denied
SELECT cursor_to_xml('c', 1, true, false, '')

-- case: ts_stat is denied
SELECT * FROM ts_stat('SELECT to_tsvector(ssn) FROM sales.orders')

-- case: pg_read_file is denied
SELECT pg_read_file('/etc/passwd')

-- case: pg_catalog-qualified pg_read_file is denied
SELECT pg_catalog.pg_read_file('/etc/passwd')

-- case: pg_ls_dir is denied by prefix
SELECT * FROM pg_ls_dir('.')

-- case: lo_import is denied by prefix
SELECT lo_import('/etc/passwd')

-- case: pg_stat_file is denied
SELECT pg_stat_file('postgresql.conf')

-- case: current_query shows the rewritten text and is denied
SELECT current_query()

-- case: pg_terminate_backend is denied
SELECT pg_terminate_backend(1)

-- case: pg_logical_slot_get_changes is denied by prefix
SELECT * FROM pg_logical_slot_get_changes('s', NULL, NULL)

-- case: a denied function inside a subquery
SELECT id FROM sales.orders WHERE EXISTS (SELECT pg_read_file('x'))

-- case: a denied function in a policy-free statement
SELECT 1 WHERE pg_ls_dir('.') IS NOT NULL

-- case: set_config on an ordinary setting passes
SELECT set_config('application_name', 'x', false)

-- case: set_config on search_path is denied where it may run other than once (pgdump.sql)
SELECT 1 WHERE set_config('search_path', 'evil', false) IS NOT NULL

-- case: set_config on a protected setting is denied
SELECT set_config('role', 'postgres', false)

-- case: set_config with mixed case on session_authorization is denied
SELECT set_config('Session_Authorization', 'postgres', false)

-- case: set_config with a computed name is denied
SELECT set_config(lower('SEARCH_PATH'), 'evil', false)

-- case: set_config with a cast literal name is denied
SELECT set_config('search_path'::text, 'evil', false)

-- case: set_config on standard_conforming_strings is denied
SELECT set_config('standard_conforming_strings', 'off', false)

-- case: a schema-qualified UDF is denied
SELECT public.my_udf(id) FROM sales.orders

-- case: an unknown unqualified function is denied
SELECT my_udf(1)

-- case: a three-part function name is denied
SELECT demo.public.my_udf(1)

-- case: current_setting is allowed
SELECT current_setting('search_path')

-- case: a function-style column reference o.length is taken as reading the row
SELECT o.length FROM hr.employees o

-- case: a cast to a type is not a function call
SELECT id::text, '1'::int4 FROM sales.orders

-- case: a function used as a cast with a type name
SELECT text(id) FROM sales.orders

-- case: pg_sleep is allowed
SELECT pg_sleep(0)

-- case: a denied function inside an ORDER BY
SELECT id FROM sales.orders ORDER BY pg_read_file('x')

-- case: a denied function inside a CTE
WITH x AS (SELECT pg_read_file('x') AS f) SELECT f FROM x

-- case: a denied function in a VALUES list
VALUES (pg_read_file('x'))

-- case: OPERATOR syntax with pg_catalog is forwarded
SELECT 1 OPERATOR(pg_catalog.+) 2

-- case: OPERATOR syntax with another schema is a udf and denied
SELECT 1 OPERATOR(public.+) 2

-- case: OPERATOR syntax with another schema in a subquery comparison is denied
SELECT 1 WHERE 1 OPERATOR(public.=) ANY (SELECT id FROM sales.orders)

-- case: ORDER BY USING an operator of another schema is denied
SELECT id FROM sales.orders ORDER BY id USING OPERATOR(public.<)

-- case: ORDER BY USING a built-in operator passes
SELECT id FROM sales.orders ORDER BY id USING <

-- case: nextval changes a sequence: denied
SELECT nextval('s')

-- case: function call with named arguments and VARIADIC
SELECT format(VARIADIC ARRAY['a'])

-- case: function in a DEFAULT-like position of a CASE
SELECT CASE WHEN true THEN pg_read_file('x') ELSE 'y' END

-- case: aggregate with FILTER and ORDER BY on a masked column
SELECT string_agg(ssn, ',' ORDER BY ssn) FILTER (WHERE ssn IS NOT NULL) FROM sales.orders

-- case: aggregate with FILTER on a denied column
SELECT count(*) FILTER (WHERE salary > 0) FROM hr.employees

-- case: information_schema's built-in helpers may be called (JDBC metadata)
SELECT (information_schema._pg_expandarray(ARRAY[1,2])).n

-- case: other information_schema names are not functions a user may call
SELECT information_schema.nosuch(1)

-- case: a schema-qualified udf with Ranger udf access is forwarded
SELECT public.score(id) FROM public.orders

-- case: a udf with access, matched by a wildcard
SELECT analytics.score_v2(1)

-- case: a udf without access names the resource
-- user: carol
SELECT public.score(1)

-- case: an unqualified udf needs access in every schema of the path
-- search_path: public, analytics
SELECT score(1)

-- case: an unqualified udf with $user on the path needs access there too
-- search_path: $user, public
SELECT score(1)

-- case: a udf in a CREATE TABLE default needs udf access
-- options: ddl
CREATE TABLE bob.t (a int DEFAULT public.my_default())

-- case: a udf in an UPDATE needs udf access
UPDATE sales.regions SET name = public.score(1)::text

-- case: a udf over a masked column sees the masked value
SELECT public.score(ssn) FROM sales.orders

-- case: a udf for a super user
-- user: admin
SELECT public.anything()

-- case: pg_stat_get_* counters of tables are denied
SELECT pg_stat_get_live_tuples('sales.orders'::regclass)

-- case: replication functions are denied
SELECT pg_create_logical_replication_slot('s', 'test_decoding')

-- case: server file readers are denied
SELECT pg_hba_file_rules()

-- case: server actions are denied
SELECT pg_reload_conf()

-- case: pg_lock_status shows other sessions and is denied
SELECT * FROM pg_lock_status()

-- case: lo_from_bytea is denied by prefix
SELECT lo_from_bytea(0, 'x')

-- case: pg_catalog functions are an allow list: currtid2 reads a table's tuples by name and is refused
SELECT currtid2('sales.orders'::text, '(0,1)'::tid)

-- case: currtid2 qualified with pg_catalog is refused too
SELECT pg_catalog.currtid2('sales.orders', '(0,1)')

-- case: a relation's file path is storage layout and refused
SELECT pg_catalog.pg_relation_filepath('sales.orders')

-- case: multixact members show which transactions lock rows
SELECT * FROM pg_catalog.pg_get_multixact_members('1')

-- case: a sequence's value is read with select on the sequence, not through pg_sequence_last_value
SELECT pg_catalog.pg_sequence_last_value('sales.orders_id_seq')

-- case: statistics helpers are refused
SELECT pg_catalog.pg_stat_have_stats('relation', 0, 0)

-- case: the function forms of session_user and getpgusername name the service role and are refused
SELECT "session_user"(), pg_catalog.getpgusername()

-- case: a pg_catalog function on no list (one an extension installed there) is refused without a reason
SELECT pg_catalog.some_extension_function(1)

-- case: adminpack's functions keep their reason
SELECT pg_catalog.pg_file_write('f', 'x', false)

-- case: dblink unqualified is refused by name, as before the allow list
SELECT * FROM dblink('host=elsewhere', 'SELECT 1') AS t(a int)

-- case: internal support functions are refused with what they are
SELECT pg_catalog.int4_sum(1, 2)

-- case: a binary input function is refused
SELECT pg_catalog.int4recv(NULL)

-- case: a planner estimator is refused
SELECT pg_catalog.eqsel(NULL, NULL, NULL, NULL)

-- case: a trigger function is refused
SELECT pg_catalog."RI_FKey_check_ins"()

-- case: catalog introspection clients call is allowed
SELECT pg_catalog.format_type(23, NULL), pg_catalog.pg_get_viewdef('sales.orders_view'::regclass), pg_catalog.pg_table_is_visible(1259), pg_catalog.obj_description(1259, 'pg_class'), pg_catalog.pg_get_userbyid(10), pg_catalog.pg_encoding_to_char(6)

-- case: aggregates and window functions are allowed, also those not in the 'f' lines
SELECT pg_catalog.string_agg(region, ','), pg_catalog.ntile(2) OVER (), pg_catalog.lag(region) OVER () FROM sales.orders GROUP BY region

-- case: an operator's function called by name is allowed, and so is the tid operator
SELECT pg_catalog.tideq('(0,1)', '(0,1)'), '(0,1)'::tid = '(0,1)'::tid, pg_catalog.textout('a')

-- case: size functions are allowed (docs/security.md Known limits)
SELECT pg_catalog.pg_relation_size('sales.orders'), pg_catalog.pg_total_relation_size('sales.orders')
