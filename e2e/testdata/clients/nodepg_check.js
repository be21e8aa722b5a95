// nodepg_check drives node-postgres (npm pg) through pgranger for
// e2e/nodepg_test.go, which compares what it prints, line by line, with the
// results it expects.
//
//	NODE_PATH=…/node_modules node nodepg_check.js URL DENY_URL
//
// Every check prints "name: value" lines; a failing statement prints
// "name: ERROR <SQLSTATE>".
'use strict';

const pg = require('pg');

// Dates and numerics as the server's text, the way psql shows them.
pg.types.setTypeParser(1082, (v) => v);
pg.types.setTypeParser(1700, (v) => v);

function cell(v) {
  if (v === null || v === undefined) return 'NULL';
  return String(v);
}

function show(name, rows) {
  if (rows.length === 0) console.log(name + ': (none)');
  for (const r of rows) console.log(name + ': ' + (Array.isArray(r) ? r : Object.values(r)).map(cell).join('|'));
}

async function check(name, f) {
  try {
    await f();
  } catch (e) {
    if (!e.code) throw e;
    console.log(name + ': ERROR ' + e.code);
    console.error(name + ': ' + e.message);
  }
}

async function main(url, denyURL) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();

  // Parameterised queries: the unnamed statement, Parse/Bind/Execute.
  await check('params', async () => {
    const r = await c.query(
      'SELECT id, ssn, email, amount, order_date FROM sales.orders WHERE id > $1 AND customer <> $2 ORDER BY id',
      [1, 'nobody']);
    show('params', r.rows);
  });
  await check('params array', async () => {
    const r = await c.query({ text: 'SELECT id, ssn FROM sales.orders WHERE id = ANY($1) ORDER BY id', values: [[3, 4, 5]], rowMode: 'array' });
    show('params array', r.rows);
  });
  await check('fields', async () => {
    const r = await c.query('SELECT id, ssn, amount FROM sales.orders WHERE id = $1', [1]);
    console.log('fields: ' + r.fields.map((f) => f.name + ':' + f.dataTypeID).join(' '));
  });

  // Named prepared statements: parsed once per connection, then only
  // bound and executed.
  for (const id of [1, 3, 5, 2]) {
    await check('named ' + id, async () => {
      const r = await c.query({ name: 'order_by_id', text: 'SELECT id, ssn, email FROM sales.orders WHERE id = $1', values: [id] });
      show('named ' + id, r.rows);
    });
  }
  // A denied named statement: denied every time (the driver does not
  // remember a statement whose Parse failed), the connection stays usable.
  for (const n of [1, 2]) {
    await check('named denied ' + n, async () => {
      const r = await c.query({ name: 'salaries', text: 'SELECT salary FROM hr.employees WHERE id = $1', values: [1] });
      show('named denied ' + n, r.rows);
    });
  }
  await check('named insert', async () => {
    await c.query({ name: 'ins', text: 'INSERT INTO sales.orders (id, customer, region) VALUES ($1, $2, $3)', values: [99, 'x', 'US'] });
    console.log('named insert: ran');
  });
  // A named INSERT … RETURNING into a table bob may write (update access
  // on mallory.*): parsed once, then bound for each row; an INSERT … SELECT
  // writes and returns the masked values bob reads (order 2 is filtered out).
  for (const v of ['node a', 'node b']) {
    await check('named returning', async () => {
      const r = await c.query({ name: 'loot_ins', text: 'INSERT INTO mallory.loot (v) VALUES ($1) RETURNING v, length(v)', values: [v] });
      console.log('named returning: ' + r.command + ' ' + r.rowCount + ' ' + r.rows.map((x) => Object.values(x).map(cell).join('|')).join(','));
    });
  }
  for (const id of [1, 2, 3]) {
    await check('named masked returning', async () => {
      const r = await c.query({
        name: 'loot_ssn',
        text: "INSERT INTO mallory.loot (v) SELECT 'node ssn ' || id || ' ' || ssn FROM sales.orders WHERE id = $1 RETURNING v",
        values: [id],
      });
      console.log('named masked returning ' + id + ': ' + r.rowCount + ' ' + r.rows.map((x) => x.v).join(','));
    });
  }
  await check('named again', async () => {
    const r = await c.query({ name: 'order_by_id', text: 'SELECT id, ssn, email FROM sales.orders WHERE id = $1', values: [3] });
    show('named again', r.rows);
  });

  // A denial in a transaction aborts it: 25P02 until ROLLBACK.
  await c.query('BEGIN');
  await c.query({ name: 'loot_ins', text: 'INSERT INTO mallory.loot (v) VALUES ($1) RETURNING v, length(v)', values: ['node rolled back'] });
  await check('txn denied', async () => { await c.query('SELECT salary FROM hr.employees WHERE id = $1', [1]); });
  await check('txn aborted', async () => { await c.query('SELECT $1::int', [1]); });
  await c.query('ROLLBACK');
  await check('txn after rollback', async () => {
    const r = await c.query({ name: 'order_by_id', text: 'SELECT id, ssn, email FROM sales.orders WHERE id = $1', values: [5] });
    show('txn after rollback', r.rows);
  });
  await check('written', async () => {
    const r = await c.query({ text: 'SELECT v FROM mallory.loot WHERE v LIKE $1 ORDER BY v COLLATE "C"', values: ['node %'], rowMode: 'array' });
    show('written', r.rows);
  });
  await c.end();

  const carol = new pg.Client({ connectionString: denyURL });
  await carol.connect();
  await check('carol denied', async () => { await carol.query('SELECT name FROM hr.employees WHERE id = $1', [1]); });
  await check('carol', async () => {
    const r = await carol.query({ name: 'amounts', text: 'SELECT id, amount FROM sales.orders WHERE id > $1 ORDER BY id', values: [0] });
    show('carol', r.rows);
  });
  await carol.end();
}

main(process.argv[2], process.argv[3]).catch((e) => {
  console.error('FATAL', e);
  process.exit(1);
});
