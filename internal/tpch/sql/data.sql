-- A deterministic TPC-H-shaped data generator in SQL: no random(), every
-- value a function of its row's key (hashint8extended with one seed per
-- column), so two loads at one scale hold the same rows. The shapes follow
-- the specification's dbgen rules (clause 4.2.3): row counts per scale
-- factor, value domains, dates 1992-01-01 to 1998-12-31 with
-- CURRENTDATE 1995-06-17, the name/type/container/segment/priority/
-- instruction/ship-mode vocabularies, phone numbers whose country code is
-- the nation key + 10, sparse order keys, four suppliers per part, and
-- lineitems priced from their part. Comments are word salad from a list
-- shaped like dbgen's grammar, with the phrases Q13 and Q16 look for.
--
-- The scale knob is the setting tpch.scale (1 = TPC-H's SF 1: 6 million
-- lineitems; 0.025 ≈ 150,000). Run with search_path set to the schema that
-- holds schema.sql's tables:
--   PGOPTIONS='-c tpch.scale=0.025 -c search_path=tpch' psql -f data.sql
-- Helpers live in pg_temp and go with the session. They are plain SQL
-- functions declared STABLE so that PostgreSQL inlines them (an IMMUTABLE
-- one whose body calls a stable function, such as concat_ws, is not).

CREATE FUNCTION pg_temp.sf() RETURNS numeric LANGUAGE sql STABLE AS
$$ SELECT current_setting('tpch.scale')::numeric $$;

-- Row counts: the specification's multiples of the scale factor, with a
-- floor so a tiny scale still has four suppliers per part.
CREATE FUNCTION pg_temp.n_supplier() RETURNS bigint LANGUAGE sql STABLE AS
$$ SELECT greatest(8, round(10000 * pg_temp.sf()))::bigint $$;
CREATE FUNCTION pg_temp.n_part() RETURNS bigint LANGUAGE sql STABLE AS
$$ SELECT greatest(20, round(200000 * pg_temp.sf()))::bigint $$;
CREATE FUNCTION pg_temp.n_customer() RETURNS bigint LANGUAGE sql STABLE AS
$$ SELECT greatest(15, round(150000 * pg_temp.sf()))::bigint $$;
CREATE FUNCTION pg_temp.n_orders() RETURNS bigint LANGUAGE sql STABLE AS
$$ SELECT greatest(150, round(1500000 * pg_temp.sf()))::bigint $$;
CREATE FUNCTION pg_temp.n_clerk() RETURNS bigint LANGUAGE sql STABLE AS
$$ SELECT greatest(1, round(1000 * pg_temp.sf()))::bigint $$;

-- u: a uniform integer in [lo, hi] for key k and column seed s.
CREATE FUNCTION pg_temp.u(k bigint, s integer, lo bigint, hi bigint) RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT lo + (hashint8extended(k, s) & 2147483647) % (hi - lo + 1) $$;

-- pick: one element of a text array, uniformly.
CREATE FUNCTION pg_temp.pick(k bigint, s integer, a text[]) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT a[1 + (hashint8extended(k, s) & 2147483647) % cardinality(a)] $$;

-- w: one word of comment text.
CREATE FUNCTION pg_temp.w(k bigint, s integer) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT pg_temp.pick(k, s, ARRAY[
  'furiously','slyly','carefully','blithely','quickly','fluffily','slowly','quietly',
  'ruthlessly','thinly','closely','doggedly','daringly','bravely','stealthily','permanently',
  'idly','busily','regularly','finally','ironically','evenly','boldly','silently',
  'furious','sly','careful','blithe','quick','fluffy','slow','quiet','ironic','even',
  'bold','silent','final','regular','express','special','pending','unusual',
  'foxes','ideas','theodolites','instructions','dependencies','excuses','platelets',
  'asymptotes','courts','dolphins','packages','requests','accounts','deposits',
  'pinto','beans','frets','warhorses','tithes','sauternes','pearls','braids',
  'sleep','wake','are','cajole','haggle','nag','use','boost','affix','detect',
  'integrate','maintain','nod','among','above','about','across','after','against',
  'along','around','at','beneath','beside','among the','wake','the','to','of'])
$$;

-- t: comment text of a length in [lo, hi] (at most about 100: twelve words).
CREATE FUNCTION pg_temp.t(k bigint, s integer, lo integer, hi integer) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT rtrim(left(concat_ws(' ',
  pg_temp.w(k, s * 16 + 1), pg_temp.w(k, s * 16 + 2), pg_temp.w(k, s * 16 + 3),
  pg_temp.w(k, s * 16 + 4), pg_temp.w(k, s * 16 + 5), pg_temp.w(k, s * 16 + 6),
  pg_temp.w(k, s * 16 + 7), pg_temp.w(k, s * 16 + 8), pg_temp.w(k, s * 16 + 9),
  pg_temp.w(k, s * 16 + 10), pg_temp.w(k, s * 16 + 11), pg_temp.w(k, s * 16 + 12),
  pg_temp.w(k, s * 16 + 13), pg_temp.w(k, s * 16 + 14)),
  pg_temp.u(k, s, lo, hi)::integer)) $$;

-- t6: shorter comment text (lengths up to about 40: six words).
CREATE FUNCTION pg_temp.t6(k bigint, s integer, lo integer, hi integer) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT rtrim(left(concat_ws(' ',
  pg_temp.w(k, s * 16 + 1), pg_temp.w(k, s * 16 + 2), pg_temp.w(k, s * 16 + 3),
  pg_temp.w(k, s * 16 + 4), pg_temp.w(k, s * 16 + 5), pg_temp.w(k, s * 16 + 6),
  pg_temp.w(k, s * 16 + 7)),
  pg_temp.u(k, s, lo, hi)::integer)) $$;

-- v: dbgen's "v-string", random letters, digits and a few separators, of a
-- length in [lo, hi] (at most 64).
CREATE FUNCTION pg_temp.v(k bigint, s integer, lo integer, hi integer) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT left(translate(md5(k || '/' || s) || md5(s || '/' || k), 'abcdef', 'QwErT,'),
  pg_temp.u(k, s, lo, hi)::integer) $$;

-- phone: country code (nation key + 10) and three random groups.
CREATE FUNCTION pg_temp.phone(k bigint, s integer, nation bigint) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT (nation + 10) || '-' || pg_temp.u(k, s, 100, 999) || '-' || pg_temp.u(k, s + 1, 100, 999)
  || '-' || pg_temp.u(k, s + 2, 1000, 9999) $$;

-- retail price of a part (specification 4.2.3, P_RETAILPRICE).
CREATE FUNCTION pg_temp.retailprice(pk bigint) RETURNS numeric
LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT (90000 + ((pk / 10) % 20001) + 100 * (pk % 1000)) / 100.0 $$;

-- The i-th (0..3) supplier of part pk: four distinct suppliers per part,
-- spread over all of them as dbgen spreads PS_SUPPKEY.
CREATE FUNCTION pg_temp.partsupplier(pk bigint, i bigint, s bigint) RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT ((pk - 1) + i * (s / 4) + (pk - 1) / s) % s + 1 $$;

INSERT INTO region
SELECT k, name, pg_temp.t(k, 1, 31, 115)
FROM unnest(ARRAY['AFRICA','AMERICA','ASIA','EUROPE','MIDDLE EAST']) WITH ORDINALITY AS r(name, o),
     LATERAL (SELECT (o - 1)::integer AS k) AS kk;

INSERT INTO nation
SELECT k, name, region, pg_temp.t(k, 2, 31, 114)
FROM (VALUES
  (0, 'ALGERIA', 0), (1, 'ARGENTINA', 1), (2, 'BRAZIL', 1), (3, 'CANADA', 1), (4, 'EGYPT', 4),
  (5, 'ETHIOPIA', 0), (6, 'FRANCE', 3), (7, 'GERMANY', 3), (8, 'INDIA', 2), (9, 'INDONESIA', 2),
  (10, 'IRAN', 4), (11, 'IRAQ', 4), (12, 'JAPAN', 2), (13, 'JORDAN', 4), (14, 'KENYA', 0),
  (15, 'MOROCCO', 0), (16, 'MOZAMBIQUE', 0), (17, 'PERU', 1), (18, 'CHINA', 2), (19, 'ROMANIA', 3),
  (20, 'SAUDI ARABIA', 4), (21, 'VIETNAM', 2), (22, 'RUSSIA', 3), (23, 'UNITED KINGDOM', 3),
  (24, 'UNITED STATES', 1)) AS n(k, name, region);

-- Supplier: about 1 in 200 has "Customer … Complaints" in its comment and
-- as many "Customer … Recommends" (dbgen puts 5 of each per 10,000; more
-- here so Q16's predicate selects rows at small scales).
INSERT INTO supplier
SELECT k,
       'Supplier#' || lpad(k::text, 9, '0'),
       pg_temp.v(k, 3, 10, 40),
       nk,
       pg_temp.phone(k, 4, nk),
       pg_temp.u(k, 7, -99999, 999999) / 100.0,
       CASE k % 100
         WHEN 17 THEN left(pg_temp.t6(k, 8, 5, 30) || ' Customer ' || pg_temp.w(k, 9) || ' Complaints ' || pg_temp.t6(k, 10, 5, 30), 100)
         WHEN 61 THEN left(pg_temp.t6(k, 8, 5, 30) || ' Customer ' || pg_temp.w(k, 9) || ' Recommends ' || pg_temp.t6(k, 10, 5, 30), 100)
         ELSE pg_temp.t(k, 8, 25, 100)
       END
FROM generate_series(1, pg_temp.n_supplier()) AS k,
     LATERAL (SELECT pg_temp.u(k, 5, 0, 24) AS nk) AS n;

INSERT INTO part
SELECT k,
       concat_ws(' ', pg_temp.pick(k, 11, c), pg_temp.pick(k, 12, c), pg_temp.pick(k, 13, c),
                      pg_temp.pick(k, 14, c), pg_temp.pick(k, 15, c)),
       'Manufacturer#' || m,
       'Brand#' || m || pg_temp.u(k, 17, 1, 5),
       concat_ws(' ',
         pg_temp.pick(k, 18, ARRAY['STANDARD','SMALL','MEDIUM','LARGE','ECONOMY','PROMO']),
         pg_temp.pick(k, 19, ARRAY['ANODIZED','BURNISHED','PLATED','POLISHED','BRUSHED']),
         pg_temp.pick(k, 20, ARRAY['TIN','NICKEL','BRASS','STEEL','COPPER'])),
       pg_temp.u(k, 21, 1, 50),
       pg_temp.pick(k, 22, ARRAY['SM','LG','MED','JUMBO','WRAP']) || ' ' ||
         pg_temp.pick(k, 23, ARRAY['CASE','BOX','BAG','JAR','PKG','PACK','CAN','DRUM']),
       pg_temp.retailprice(k),
       pg_temp.t6(k, 24, 5, 22)
FROM generate_series(1, pg_temp.n_part()) AS k,
     LATERAL (SELECT pg_temp.u(k, 16, 1, 5) AS m) AS mm,
     LATERAL (SELECT ARRAY[
       'almond','antique','aquamarine','azure','beige','bisque','black','blanched','blue',
       'blush','brown','burlywood','burnished','chartreuse','chiffon','chocolate','coral',
       'cornflower','cornsilk','cream','cyan','dark','deep','dim','dodger','drab','firebrick',
       'floral','forest','frosted','gainsboro','ghost','goldenrod','green','grey','honeydew',
       'hot','indian','ivory','khaki','lace','lavender','lawn','lemon','light','lime','linen',
       'magenta','maroon','medium','metallic','midnight','mint','misty','moccasin','navajo',
       'navy','olive','orange','orchid','pale','papaya','peach','peru','pink','plum','powder',
       'puff','purple','red','rose','rosy','royal','saddle','salmon','sandy','seashell',
       'sienna','sky','slate','smoke','snow','spring','steel','tan','thistle','tomato',
       'turquoise','violet','wheat','white','yellow'] AS c) AS colors;

INSERT INTO partsupp
SELECT pk,
       pg_temp.partsupplier(pk, i, pg_temp.n_supplier()),
       pg_temp.u(pk * 4 + i, 25, 1, 9999),
       pg_temp.u(pk * 4 + i, 26, 100, 100000) / 100.0,
       pg_temp.t(pk * 4 + i, 27, 49, 100)
FROM generate_series(1, pg_temp.n_part()) AS pk, generate_series(0, 3) AS i;

INSERT INTO customer
SELECT k,
       'Customer#' || lpad(k::text, 9, '0'),
       pg_temp.v(k, 28, 10, 40),
       nk,
       pg_temp.phone(k, 30, nk),
       pg_temp.u(k, 33, -99999, 999999) / 100.0,
       pg_temp.pick(k, 34, ARRAY['AUTOMOBILE','BUILDING','FURNITURE','MACHINERY','HOUSEHOLD']),
       pg_temp.t(k, 35, 29, 100)
FROM generate_series(1, pg_temp.n_customer()) AS k,
     LATERAL (SELECT pg_temp.u(k, 29, 0, 24) AS nk) AS n;

-- Lineitem first (1 to 7 lines per order), from the order's date; the
-- orders then take their status and total price from their lines. Order
-- keys are sparse as in dbgen: the first 8 of every 32. One order in 997 is
-- a bulk order, 7 lines of 41 to 50 items: dbgen's uniform quantities make
-- an order of more than 300 items (Q18) about one in 10,000, too rare for
-- Q18 to select rows at small scales.
CREATE TEMP TABLE tpch_order_base AS
SELECT i,
       ((i - 1) / 8) * 32 + (i - 1) % 8 + 1 AS orderkey,
       date '1992-01-01' + pg_temp.u(i, 40, 0, 2405)::integer AS orderdate,
       i % 997 = 0 AS bulk
FROM generate_series(1, pg_temp.n_orders()) AS i;

INSERT INTO lineitem
SELECT o.orderkey, l.partkey, pg_temp.partsupplier(l.partkey, pg_temp.u(l.k, 52, 0, 3), pg_temp.n_supplier()),
       l.ln, l.qty, l.qty * pg_temp.retailprice(l.partkey),
       pg_temp.u(l.k, 53, 0, 10) / 100.0,
       pg_temp.u(l.k, 54, 0, 8) / 100.0,
       CASE WHEN d.receipt <= date '1995-06-17'
            THEN CASE WHEN pg_temp.u(l.k, 55, 0, 1) = 0 THEN 'R' ELSE 'A' END
            ELSE 'N' END,
       CASE WHEN d.ship > date '1995-06-17' THEN 'O' ELSE 'F' END,
       d.ship, d.commit_, d.receipt,
       pg_temp.pick(l.k, 56, ARRAY['DELIVER IN PERSON','COLLECT COD','NONE','TAKE BACK RETURN']),
       pg_temp.pick(l.k, 57, ARRAY['REG AIR','AIR','RAIL','SHIP','TRUCK','MAIL','FOB']),
       pg_temp.t6(l.k, 58, 10, 43)
FROM tpch_order_base AS o,
     LATERAL generate_series(1, CASE WHEN o.bulk THEN 7 ELSE pg_temp.u(o.i, 50, 1, 7)::integer END) AS ln,
     LATERAL (SELECT ln, o.orderkey * 8 + ln AS k,
                     pg_temp.u(o.orderkey * 8 + ln, 51, 1, pg_temp.n_part()) AS partkey,
                     pg_temp.u(o.orderkey * 8 + ln, 59, CASE WHEN o.bulk THEN 41 ELSE 1 END, 50) AS qty) AS l,
     LATERAL (SELECT o.orderdate + pg_temp.u(l.k, 60, 1, 121)::integer AS ship,
                     o.orderdate + pg_temp.u(l.k, 61, 30, 90)::integer AS commit_) AS d0,
     LATERAL (SELECT d0.ship, d0.commit_, d0.ship + pg_temp.u(l.k, 62, 1, 30)::integer AS receipt) AS d;

-- Orders: two customers in three have orders (custkey not divisible by 3);
-- about 1 comment in 50 mentions "special … requests" (Q13).
INSERT INTO orders
SELECT o.orderkey,
       CASE WHEN c % 3 = 0 THEN c - 1 ELSE c END,
       li.status,
       li.total,
       o.orderdate,
       pg_temp.pick(o.i, 41, ARRAY['1-URGENT','2-HIGH','3-MEDIUM','4-NOT SPECIFIED','5-LOW']),
       'Clerk#' || lpad(pg_temp.u(o.i, 42, 1, pg_temp.n_clerk())::text, 9, '0'),
       0,
       CASE WHEN o.i % 50 = 7
            THEN left(pg_temp.t6(o.i, 43, 5, 25) || ' special ' || pg_temp.w(o.i, 44) || ' requests ' || pg_temp.t6(o.i, 45, 5, 25), 78)
            ELSE pg_temp.t(o.i, 43, 19, 78) END
FROM tpch_order_base AS o
JOIN (SELECT l_orderkey,
             round(sum(l_extendedprice * (1 + l_tax) * (1 - l_discount)), 2) AS total,
             CASE WHEN bool_and(l_linestatus = 'F') THEN 'F'
                  WHEN bool_and(l_linestatus = 'O') THEN 'O'
                  ELSE 'P' END AS status
      FROM lineitem GROUP BY l_orderkey) AS li ON li.l_orderkey = o.orderkey,
     LATERAL (SELECT pg_temp.u(o.i, 46, 1, pg_temp.n_customer()) AS c) AS cc;

DROP TABLE tpch_order_base;
