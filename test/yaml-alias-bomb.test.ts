import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Served, serve } from './support/serve.js';
import { project, troupe } from './support/troupe.js';

/**
 * Red team M3: one 900 KB anchor aliased 300 times is a 0.9 MB file (under the API's 1 MiB body
 * limit) that expanded to a 270 MB pipeline in every task's `task_created`. Through the built
 * binary and a real server: refused at the alias that crosses 1 MiB, and no task is stored.
 */

const bomb = `agents:\n${Array.from({ length: 301 }, (_, i) =>
  [
    `  - id: a${i}`,
    '    runtime: command',
    '    command: [echo, done]',
    `    system_prompt: ${i === 0 ? `&big "${'A'.repeat(900_000)}"` : '*big'}`,
  ].join('\n'),
).join('\n')}\n`;
// agent a2's prompt: its alias is the second, the one that takes the aliases past 1 MiB
const where = '13:20';
const message = 'YAML aliases expand to more than 1 MiB of text';

let dir: string;
beforeAll(() => {
  dir = project({ 'bomb.yaml': bomb });
});

const tasks = async (cwd: string) => JSON.parse((await troupe(cwd, ['list', '--json'])).stdout) as unknown[];

describe('a YAML alias bomb through the CLI', () => {
  it('validate and run: exit 2, one line at file:line:col, no task stored', async () => {
    const validated = await troupe(dir, ['validate', 'bomb.yaml']);
    expect(validated.code).toBe(2);
    expect(validated.stderr).toBe('');
    expect(validated.stdout.split('\n')[0]).toBe(`bomb.yaml:${where}: error: ${message}`);

    const run = await troupe(dir, ['run', '--no-interactive', '-f', 'bomb.yaml', 'x']);
    expect(run.code).toBe(2);
    const [line, hint, ...rest] = run.stderr.split('\n');
    expect(line).toBe(`troupe: bomb.yaml:${where}: ${message}`);
    expect(hint).toMatch(/^ {2}hint: .*alias/);
    expect(rest).toEqual([]);
    expect(await tasks(dir)).toEqual([]);
  });
});

describe('a YAML alias bomb through the API', () => {
  let server: Served;
  let apiDir: string;
  const api = (path: string) => new URL(path, server.url).toString();
  const send = (method: string, path: string, body: unknown) =>
    fetch(api(path), { method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  beforeAll(async () => {
    apiDir = project({ '.troupe/config.yaml': 'default_pipeline: bomb\n' });
    server = await serve(apiDir);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('refuses to save it, and refuses to run it when the file is put there by hand', async () => {
    const saved = await send('PUT', '/api/pipelines/bomb', { content: bomb });
    expect(saved.status).toBe(422);
    const body = (await saved.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('pipeline_invalid');
    expect(body.error.message).toContain(message);

    mkdirSync(join(apiDir, '.troupe', 'pipelines'), { recursive: true });
    writeFileSync(join(apiDir, '.troupe', 'pipelines', 'bomb.yaml'), bomb);
    const run = await send('POST', '/api/run', { pipeline: 'bomb', input: 'x' });
    const text = await run.text();
    expect(run.status, text).toBe(422);
    expect(text).toContain(message);
    expect(await (await fetch(api('/api/tasks'))).json()).toMatchObject({ tasks: [] });
  });
});
