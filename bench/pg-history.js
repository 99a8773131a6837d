// A PostgreSQL store's history made in bulk: n copies of one real finished task, written with
// set-based SQL straight into its tables, in the shape the store's own writes leave them
// (troupe_create_task, troupe_append, troupe_take_lease: the task's row with its status, current
// agent and last change, its events under consecutive seqs, its released lease). For
// bench/postgres-scale.js; a copy differs from the model in its id, its input and its times.

// a bijection on 24 bits (an odd multiplier modulo 2^24): ids shaped like newTaskId's, all different
const MULTIPLIER = 2654435761;
const sqlTaskId = (i) => `'T-' || upper(lpad(to_hex((${i} * ${MULTIPLIER}::bigint) % 16777216), 6, '0'))`;

/** The id of the history's i-th task (1-based), as the SQL below writes it. */
export const historyTaskId = (i) =>
  `T-${((i * MULTIPLIER) % 2 ** 24).toString(16).toUpperCase().padStart(6, '0')}`;

// the store's times are JavaScript's toISOString(): milliseconds, UTC, a Z
const iso = (ts) => `to_char((${ts}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A task as stored in `schema`: its row, its events (not set aside) and its lease's row. */
export async function readStoredTask(client, schema, taskId) {
  const one = async (sql) => (await client.query(sql, [taskId])).rows;
  const [task] = await one(`SELECT * FROM ${schema}.tasks WHERE id = $1`);
  const events = await one(
    `SELECT type, at, data FROM ${schema}.events WHERE task_id = $1 AND superseded_by IS NULL ORDER BY seq`,
  );
  const [lease] = await one(`SELECT epoch, expires_at FROM ${schema}.leases WHERE task_id = $1`);
  return { task, events, lease };
}

/**
 * Adds `n` copies of `model` (readStoredTask's) to the store in `schema`, one every `stepSeconds`,
 * all before a day ago (older than whatever is run after), then VACUUM ANALYZE (as autovacuum
 * would have done to a store that grew to this size) and CHECKPOINT. Returns the times taken and
 * the schema's size.
 */
export async function fillHistory(client, schema, n, model, { stepSeconds = 30 } = {}) {
  const created = Date.parse(model.task.created_at);
  const offsetMs = (at) => Date.parse(at) - created;
  const lastMs = offsetMs(model.task.updated_at);
  const first = new Date(Date.now() - 86_400_000 - n * stepSeconds * 1000).toISOString();
  const start = `$1::timestamptz + i * $2::float8 * interval '1 second'`;
  const inputField = `"input":${JSON.stringify(model.task.input)}`;
  const t0 = performance.now();
  await client.query('BEGIN');
  try {
    await client.query(`SET LOCAL search_path = ${schema}`);
    await client.query(
      `INSERT INTO tasks (ord, id, status, pipeline, input, created_at, updated_at, current_agent)
       OVERRIDING SYSTEM VALUE
       SELECT (SELECT coalesce(max(ord), 0) FROM tasks) + i, ${sqlTaskId('i')}, $4, $5, 'task ' || i,
         ${iso(start)}, ${iso(`${start} + $6::float8 * interval '1 ms'`)}, $7
       FROM generate_series(1, $3::int) i`,
      [first, stepSeconds, n, model.task.status, model.task.pipeline, lastMs, model.task.current_agent],
    );
    // the model's input, where it stands in task_created and in the first stage_started
    await client.query(
      `INSERT INTO events (seq, task_id, type, at, data) OVERRIDING SYSTEM VALUE
       SELECT (SELECT coalesce(max(seq), 0) FROM events) + (i - 1) * $4::int + m.n, ${sqlTaskId('i')}, m.type,
         ${iso(`${start} + m.off * interval '1 ms'`)}, replace(m.data, $8, '"input":"task ' || i || '"')
       FROM generate_series(1, $3::int) i
       CROSS JOIN unnest($5::text[], $6::float8[], $7::text[]) WITH ORDINALITY AS m(type, off, data, n)`,
      [
        first,
        stepSeconds,
        n,
        model.events.length,
        model.events.map((e) => e.type),
        model.events.map((e) => offsetMs(e.at)),
        model.events.map((e) => e.data),
        inputField,
      ],
    );
    if (model.lease)
      await client.query(
        `INSERT INTO leases (task_id, pid, host, worker, epoch, expires_at)
         SELECT ${sqlTaskId('i')}, NULL, NULL, NULL, $4, ${start} + $5::float8 * interval '1 ms'
         FROM generate_series(1, $3::int) i`,
        [first, stepSeconds, n, model.lease.epoch, model.lease.expires_at.getTime() - created],
      );
    // the identities hand out what follows the rows written with explicit values
    await client.query(`SELECT setval(pg_get_serial_sequence('tasks', 'ord'), (SELECT max(ord) FROM tasks))`);
    await client.query(
      `SELECT setval(pg_get_serial_sequence('events', 'seq'), (SELECT max(seq) FROM events))`,
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
  const t1 = performance.now();
  await client.query(`VACUUM (ANALYZE) ${schema}.tasks, ${schema}.events, ${schema}.leases`);
  // the fill's writes go to disk now, not in the background while the bench measures
  await client.query('CHECKPOINT');
  const t2 = performance.now();
  const [{ bytes }] = (
    await client.query(
      `SELECT sum(pg_total_relation_size(c.oid))::bigint AS bytes FROM pg_class c
       JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = $1 AND c.relkind = 'r'`,
      [schema],
    )
  ).rows;
  return { writeMs: t1 - t0, settleMs: t2 - t1, bytes: Number(bytes) };
}
