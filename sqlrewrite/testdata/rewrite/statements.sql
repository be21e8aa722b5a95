-- case: BEGIN passes
BEGIN

-- case: START TRANSACTION passes
START TRANSACTION READ ONLY

-- case: COMMIT and ROLLBACK pass
COMMIT; ROLLBACK

-- case: SAVEPOINT and RELEASE pass
SAVEPOINT a; RELEASE a; ROLLBACK TO a

-- case: BEGIN then a rewritten SELECT then COMMIT
BEGIN; SELECT ssn FROM sales.orders; COMMIT

-- case: SHOW passes
SHOW TimeZone

-- case: LISTEN, UNLISTEN, NOTIFY pass
LISTEN ch; UNLISTEN ch; NOTIFY ch, 'x'

-- case: DEALLOCATE passes
DEALLOCATE ALL

-- case: FETCH and CLOSE pass
FETCH 10 FROM c; CLOSE c

-- case: MOVE passes
MOVE NEXT FROM c

-- case: DISCARD passes
DISCARD PLANS

-- case: INSERT is denied naming the kind
INSERT INTO sales.orders (id) VALUES (1)

-- case: UPDATE is denied
UPDATE sales.orders SET ssn = 'x'

-- case: DELETE is denied
DELETE FROM sales.orders

-- case: MERGE is denied
MERGE INTO sales.orders o USING sales.regions r ON o.region = r.region WHEN MATCHED THEN DELETE

-- case: COPY of a table becomes COPY of a rewritten query
COPY sales.orders TO STDOUT

-- case: COPY of a table with a column list keeps the columns and options
COPY sales.orders (id, ssn) TO STDOUT WITH (FORMAT csv, HEADER)

-- case: COPY of a table with inheritance children copies only its own rows, as in PostgreSQL
COPY sales.orders (id) TO STDOUT

-- case: COPY of a partitioned table copies every partition, as COPY (SELECT * FROM t) does
COPY sales.ledger TO STDOUT

-- case: COPY of a partitioned table with a column list
COPY sales.ledger (account, id) TO STDOUT WITH (FORMAT csv)

-- case: COPY of a partition copies that partition, under its root's policies
COPY sales.ledger_2024 TO STDOUT

-- case: COPY of a query reading a partitioned table
COPY (SELECT * FROM sales.ledger) TO STDOUT

-- case: COPY of a relation that does not exist
COPY sales.nothing TO STDOUT

-- case: COPY of a query has the query rewritten
COPY (SELECT id, ssn FROM sales.orders WHERE id < 5) TO STDOUT

-- case: COPY of a denied column is denied
COPY hr.employees (salary) TO STDOUT

-- case: COPY TO a server file is denied
COPY sales.orders TO '/tmp/x'

-- case: COPY of a query to a file is denied
COPY (SELECT 1) TO '/tmp/x' 

-- case: COPY FROM STDIN is denied
COPY sales.orders FROM STDIN

-- case: COPY TO PROGRAM is denied
COPY sales.orders TO PROGRAM 'cat'

-- case: SELECT INTO is denied
SELECT ssn INTO t FROM sales.orders

-- case: CREATE TABLE AS is denied
CREATE TABLE t AS SELECT ssn FROM sales.orders

-- case: SELECT FOR UPDATE is denied
SELECT id FROM sales.orders FOR UPDATE

-- case: SELECT FOR SHARE in a subquery is denied
SELECT * FROM (SELECT id FROM sales.orders FOR SHARE) s

-- case: EXPLAIN of a row-filtered table is denied
EXPLAIN SELECT ssn FROM sales.orders

-- case: PREPARE is remembered; the backend gets a placeholder
PREPARE p AS SELECT ssn FROM sales.orders

-- case: EXECUTE of a statement not prepared in the session is refused
EXECUTE p

-- case: DECLARE CURSOR has its query rewritten
DECLARE c CURSOR WITH HOLD FOR SELECT ssn FROM sales.orders

-- case: DECLARE CURSOR over a denied column is denied
DECLARE c CURSOR FOR SELECT salary FROM hr.employees

-- case: CREATE VIEW is denied
CREATE VIEW v AS SELECT ssn FROM sales.orders

-- case: DROP TABLE is denied
DROP TABLE sales.orders

-- case: TRUNCATE is denied
TRUNCATE sales.orders

-- case: ALTER TABLE is denied
ALTER TABLE sales.orders DISABLE ROW LEVEL SECURITY

-- case: CREATE FUNCTION is denied
CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'

-- case: DO is denied
DO $$BEGIN PERFORM 1; END$$

-- case: CALL is denied
CALL p()

-- case: GRANT is denied
GRANT SELECT ON sales.orders TO bob

-- case: CREATE ROLE is denied
CREATE ROLE x

-- case: ALTER ROLE is denied with its kind
ALTER ROLE bob SUPERUSER

-- case: ALTER SYSTEM is denied
ALTER SYSTEM SET work_mem = '1GB'

-- case: LOAD is denied
LOAD 'plpgsql'

-- case: VACUUM is denied
VACUUM sales.orders

-- case: ANALYZE is denied
ANALYZE sales.orders

-- case: LOCK in its default mode (ACCESS EXCLUSIVE) is denied
LOCK sales.orders

-- case: CREATE RULE is denied
CREATE RULE r AS ON SELECT TO t DO INSTEAD SELECT 1

-- case: CREATE TRIGGER is denied
CREATE TRIGGER tr BEFORE INSERT ON sales.orders FOR EACH ROW EXECUTE FUNCTION f()

-- case: CREATE TEMP TABLE is denied
CREATE TEMP TABLE t (a int)

-- case: CREATE EXTENSION is denied with its kind
CREATE EXTENSION dblink

-- case: REFRESH MATERIALIZED VIEW is denied with its kind
REFRESH MATERIALIZED VIEW v

-- case: CREATE MATERIALIZED VIEW is denied with its kind
CREATE MATERIALIZED VIEW v AS SELECT ssn FROM sales.orders

-- case: CREATE DATABASE is denied with its kind
CREATE DATABASE x

-- case: CREATE SEQUENCE is denied with its kind
CREATE SEQUENCE s

-- case: CREATE TYPE is denied with its kind
CREATE TYPE t AS (a int)

-- case: CREATE AGGREGATE is denied with its kind
CREATE AGGREGATE a (int) (SFUNC = int4pl, STYPE = int)

-- case: CREATE TEXT SEARCH DICTIONARY is denied with its kind
CREATE TEXT SEARCH DICTIONARY d (TEMPLATE = simple)

-- case: SET CONSTRAINTS is denied with its kind
SET CONSTRAINTS ALL DEFERRED

-- case: CREATE SERVER is denied with its kind
CREATE SERVER s FOREIGN DATA WRAPPER w

-- case: CHECKPOINT is denied with its kind
CHECKPOINT

-- case: REINDEX is denied with its kind
REINDEX TABLE sales.orders

-- case: COMMENT is denied with its kind
COMMENT ON TABLE sales.orders IS 'x'

-- case: SECURITY LABEL is denied with its kind
SECURITY LABEL ON TABLE sales.orders IS 'x'

-- case: CLUSTER is denied with its kind
CLUSTER sales.orders

-- case: IMPORT FOREIGN SCHEMA is denied with its kind
IMPORT FOREIGN SCHEMA s FROM SERVER x INTO public

-- case: PREPARE TRANSACTION is denied (one service role for every user)
PREPARE TRANSACTION 'x'

-- case: a denied second statement denies the whole text
SELECT ssn FROM sales.orders; DELETE FROM sales.orders

-- case: a denied first statement denies the whole text
DELETE FROM sales.orders; SELECT 1

-- case: a denied column in the second statement denies the whole text
SELECT 1; SELECT salary FROM hr.employees

-- case: two rewritten statements
SELECT ssn FROM sales.orders; SELECT email FROM hr.employees

-- case: an empty statement list
;

-- case: a comment only
-- nothing here

-- case: pass statements are kept when another statement of the text is rewritten
SHOW TimeZone; SET statement_timeout = '5s'; LISTEN "Ch"; NOTIFY "Ch", 'x''y'; UNLISTEN *; DEALLOCATE ALL; DISCARD PLANS; SELECT ssn FROM sales.orders; SAVEPOINT s; ROLLBACK TO SAVEPOINT s; RELEASE s; START TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY; FETCH FORWARD 5 FROM c; MOVE LAST IN c; CLOSE c; CLOSE ALL; SET TIME ZONE 'UTC'; SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY; RESET work_mem; COMMIT AND CHAIN

-- case: COMMIT PREPARED is denied
COMMIT PREPARED 'x'
