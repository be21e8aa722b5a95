-- Primary keys and the usual foreign-key indexes of the TPC-H tables, run
-- (like schema.sql) with search_path set to the target schema, after the
-- rows are loaded.
ALTER TABLE region   ADD PRIMARY KEY (r_regionkey);
ALTER TABLE nation   ADD PRIMARY KEY (n_nationkey);
ALTER TABLE supplier ADD PRIMARY KEY (s_suppkey);
ALTER TABLE customer ADD PRIMARY KEY (c_custkey);
ALTER TABLE part     ADD PRIMARY KEY (p_partkey);
ALTER TABLE partsupp ADD PRIMARY KEY (ps_partkey, ps_suppkey);
ALTER TABLE orders   ADD PRIMARY KEY (o_orderkey);
ALTER TABLE lineitem ADD PRIMARY KEY (l_orderkey, l_linenumber);

CREATE INDEX ON nation (n_regionkey);
CREATE INDEX ON supplier (s_nationkey);
CREATE INDEX ON customer (c_nationkey);
CREATE INDEX ON partsupp (ps_suppkey);
CREATE INDEX ON orders (o_custkey);
CREATE INDEX ON orders (o_orderdate);
CREATE INDEX ON lineitem (l_partkey, l_suppkey);
CREATE INDEX ON lineitem (l_suppkey);
CREATE INDEX ON lineitem (l_shipdate);
