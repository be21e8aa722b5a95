// nodepg_copy drives COPY through pgranger with node-postgres (npm pg) and
// npm pg-copy-streams, for e2e/nodepg_copy_test.go, which compares what it
// prints, line by line, with the results it expects.
//
//	NODE_PATH=…/node_modules node nodepg_copy.js URL
//
// COPY … TO STDOUT prints "name: <the bytes received, base64>", so the test
// compares them byte for byte; COPY … FROM STDIN prints "name: <rows>";
// a failing statement prints "name: ERROR <SQLSTATE>".
'use strict';

const pg = require('pg');
const { to: copyTo, from: copyFrom } = require('pg-copy-streams');
const { pipeline } = require('stream/promises');
const { Readable, Writable } = require('stream');

async function check(name, f) {
  try {
    console.log(name + ': ' + (await f()));
  } catch (e) {
    if (!e.code) throw e;
    console.log(name + ': ERROR ' + e.code);
    console.error(name + ': ' + e.message);
  }
}

// copyOut streams a COPY … TO STDOUT into memory, as an application
// piping it to a file or an HTTP response would.
async function copyOut(c, sql) {
  const chunks = [];
  await pipeline(c.query(copyTo(sql)), new Writable({
    write(chunk, _enc, done) { chunks.push(chunk); done(); },
  }));
  return Buffer.concat(chunks).toString('base64');
}

// copyIn streams data, in several chunks, into a COPY … FROM STDIN and
// returns the row count the server reported.
async function copyIn(c, sql, chunks) {
  const stream = c.query(copyFrom(sql));
  await pipeline(Readable.from(chunks.map((s) => Buffer.from(s))), stream);
  return String(stream.rowCount);
}

async function main(url) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();

  await check('to table text', () => copyOut(c, 'COPY sales.orders TO STDOUT'));
  await check('to query csv', () => copyOut(c,
    'COPY (SELECT id, ssn, email, amount, order_date FROM sales.orders ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER)'));
  await check('to query binary', () => copyOut(c, 'COPY (SELECT id, ssn FROM sales.orders ORDER BY id) TO STDOUT WITH (FORMAT binary)'));
  await check('to denied', () => copyOut(c, 'COPY hr.employees (salary) TO STDOUT'));
  // The connection is still usable after a denied COPY.
  await check('after denial', async () => (await c.query('SELECT ssn FROM sales.orders WHERE id = $1', [3])).rows[0].ssn);

  await check('from text', () => copyIn(c, 'COPY mallory.loot (v) FROM STDIN', ['nodecopy a\nnode', 'copy b\n', 'nodecopy tab\\there\n']));
  await check('from csv', () => copyIn(c, 'COPY mallory.loot (v) FROM STDIN WITH (FORMAT csv)', ['"nodecopy c, quoted"\n']));
  await check('from denied', () => copyIn(c, 'COPY sales.orders (id, customer, region) FROM STDIN', ['99\tx\tUS\n']));
  await check('from bad row', () => copyIn(c, 'COPY mallory.loot (v) FROM STDIN', ['nodecopy too\tmany\n']));
  await check('read back', async () => {
    const r = await c.query({ text: 'SELECT v FROM mallory.loot WHERE v LIKE $1 ORDER BY v COLLATE "C"', values: ['nodecopy %'], rowMode: 'array' });
    return r.rows.map((x) => x[0]).join('|');
  });
  await c.end();
}

main(process.argv[2]).catch((e) => {
  console.error('FATAL', e);
  process.exit(1);
});
