import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { dropSchemas, PG_URL, postgresUnreachable, scratchSchemaName } from './support/postgres.js';
import { repoRoot } from './support/troupe.js';

const unreachable = await postgresUnreachable();
const schemas = new Set<string>();
afterAll(() => dropSchemas(schemas));

const storeModule = pathToFileURL(join(repoRoot, 'dist', 'store', 'postgres', 'postgres-store.js')).href;

// one worker process: opens the store, waits for "go" on stdin, tries to take the lease once
const contender = `
const { openPostgresStore } = await import(${JSON.stringify(storeModule)});
const [url, schema, taskId, name] = process.argv.slice(1);
const store = openPostgresStore(url, { schema });
process.stdout.write('ready\\n');
process.stdin.once('data', () => {
  const won = store.tryLease(taskId, { pid: process.pid, host: name, worker: name });
  process.stdout.write(won ? 'won\\n' : 'lost\\n');
  store.close();
  process.exit(0);
});
`;

describe.skipIf(unreachable)(`leases across processes${unreachable ? `: ${unreachable}` : ''}`, () => {
  it('of four worker processes that try to take one lease at the same moment, exactly one gets it', async () => {
    const schema = scratchSchemaName();
    schemas.add(schema);
    const { openPostgresStore } = (await import(
      storeModule
    )) as typeof import('../src/store/postgres/postgres-store.js');
    const setup = openPostgresStore(PG_URL, { schema });
    const { taskId } = setup.createTask({
      type: 'task_created',
      pipeline: 'p',
      input: 'x',
    } as Parameters<typeof setup.createTask>[0]);
    setup.close();

    const workers = ['m1', 'm2', 'm3', 'm4'].map((name) =>
      execa('node', ['--input-type=module', '-e', contender, PG_URL, schema, taskId, name], {
        stdin: 'pipe',
        reject: false,
        timeout: 20_000,
      }),
    );
    // all started and connected before any is let go
    await Promise.all(
      workers.map(
        (child) =>
          new Promise<void>((resolve) => {
            child.stdout?.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
          }),
      ),
    );
    for (const child of workers) child.stdin?.write('go\n');
    const results = await Promise.all(workers);
    const answers = results.map((r) => String(r.stdout).trim().split('\n').pop());
    expect(
      answers.filter((a) => a === 'won'),
      results.map((r) => r.stderr).join('\n'),
    ).toHaveLength(1);
    expect(answers.filter((a) => a === 'lost')).toHaveLength(3);
  });
});
