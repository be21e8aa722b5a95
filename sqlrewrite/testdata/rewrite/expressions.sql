-- case: tag row filter with TAG and GET_TAG_ATTR_Q, tag CUSTOM mask with TAG, resource CUSTOM mask with RES and TAG_NAMES_CSV
SELECT id, region, iban, note FROM sales.accounts;

-- case: TAG._type and TAG._matchType in a tag mask; REQ.user, an escaped hostile tag attribute and TAGS of the schema in a tag filter
-- user: carol
SELECT id, iban FROM sales.accounts;

-- case: no tag filter item: only the masks
-- user: alice
SELECT iban, note FROM sales.accounts;

-- case: a table-level read still gets the tag row filter
SELECT count(*) FROM sales.accounts;

-- case: REQ.clientIPAddress would make the cached rewrite depend on the client: denied
-- user: eve
SELECT id FROM sales.accounts;

-- case: TAG in a resource policy's mask has no current tag: denied
-- user: dave
SELECT id FROM sales.accounts;

-- case: a missing tag attribute: denied
-- user: frank
SELECT id FROM sales.accounts;

-- case: super users bypass tag filters and masks
-- user: admin
SELECT id, iban FROM sales.accounts;

-- case: other tables of the tagged schema are unchanged (SALESDB has no policy)
SELECT id FROM sales.regions;
