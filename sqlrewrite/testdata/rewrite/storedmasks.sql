-- case: a verified stored mask is read instead of computing the mask (ssn); an unverified one is not (email: the mask is computed)
SELECT id, ssn, email FROM sales.orders_stored WHERE ssn LIKE '%1'

-- case: a predicate on the masked column reads the stored column
SELECT count(*) FROM sales.orders_stored WHERE ssn NOT LIKE 'xxx%'

-- case: the stored-mask columns themselves: ssn's shows (bob sees ssn masked the same way), email's is a typed NULL (bob sees email hashed, the column is not verified), region's shows (bob reads region unmasked)
SELECT ssn__pgranger_mask_show_last_4, email__pgranger_mask_hash, region__pgranger_mask FROM sales.orders_stored

-- case: SELECT * keeps every column in place
SELECT * FROM sales.orders_stored

-- case: an exempt user reads everything unmasked, the stored columns included
-- user: alice
SELECT ssn, ssn__pgranger_mask_show_last_4, email__pgranger_mask_hash FROM sales.orders_stored

-- case: ONLY and an alias
SELECT o.ssn FROM ONLY sales.orders_stored AS o

-- case: the parent has no stored column: its mask is computed
SELECT ssn FROM sales.orders

-- case: DML computes the mask (it qualifies the column)
-- options: apply
UPDATE sales.orders_stored SET amount = amount WHERE id = 10 RETURNING ssn

-- case: DML cannot probe a capped stored-mask column either: it is a typed NULL where it stands
-- options: apply
UPDATE sales.orders_stored SET amount = amount WHERE email__pgranger_mask_hash = 'x'
