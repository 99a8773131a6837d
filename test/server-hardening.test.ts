import { existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Served, serve } from './support/serve.js';
import { project, troupe, waitFor } from './support/troupe.js';

/**
 * `troupe serve` against hostile requests (issue #18): files outside the project, huge bodies,
 * paths Node's file system refuses. A real server on a real project, over HTTP.
 */

const pipeline = `agents:
  - id: writer
    runtime: claude
    system_prompt: "Write: {{ input }}"
`;
const SECRET = 'TOPSECRET-7d1f';

let dir: string;
let outside: string;
let server: Served;

const api = (path: string) => new URL(path, server.url).toString();
const post = (path: string, body: unknown) =>
  fetch(api(path), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const answer = async (response: Response) => ({ status: response.status, text: await response.text() });
const codeOf = (text: string) => (JSON.parse(text) as { error: { code: string } }).error.code;

beforeAll(async () => {
  outside = mkdtempSync(join(tmpdir(), 'troupe-outside-'));
  writeFileSync(join(outside, 'secret.yaml'), `${SECRET}: [1, 2]\n`);
  writeFileSync(join(outside, 'schema.json'), `{"type": "object", "${SECRET}": true}\n`);
  dir = project({
    '.troupe/pipelines/write.yaml': pipeline,
    '.troupe/config.yaml': 'default_pipeline: write\n',
    'script.yaml': 'agents:\n  writer: ["draft"]\n',
    'bad-script.yaml': `agents:\n  writer: ["draft"]\n${SECRET}: 1\n`,
    'typo-script.yaml': 'agents:\n  writr: ["draft"]\n',
  });
  symlinkSync(join(outside, 'secret.yaml'), join(dir, 'linked-script.yaml'));
  mkdirSync(join(dir, '.troupe', 'pipelines'), { recursive: true });
  symlinkSync(join(outside, 'secret.yaml'), join(dir, '.troupe', 'pipelines', 'linked.yaml'));
  server = await serve(dir);
});
afterAll(async () => {
  await server?.stop();
});

describe('files named in a request stay inside the project', () => {
  it('refuses a script outside the project the same way whether or not it exists, and never shows it', async () => {
    const refusals = await Promise.all(
      [
        join(outside, 'secret.yaml'),
        `../${join('..', outside, 'secret.yaml')}`,
        join(outside, 'no-such-file.yaml'),
        '/etc/passwd',
        'linked-script.yaml',
      ].map(async (script) => answer(await post('/api/run', { input: 'x', script }))),
    );
    for (const { status, text } of refusals) {
      expect(status).toBe(400);
      expect(codeOf(text)).toBe('bad_request');
      expect(text).toContain('inside the project');
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain('root:');
    }
  });

  it('says a script of the project is invalid without quoting it', async () => {
    const { status, text } = await answer(await post('/api/run', { input: 'x', script: 'bad-script.yaml' }));
    expect(status).toBe(422);
    expect(codeOf(text)).toBe('script_invalid');
    expect(text).not.toContain(SECRET);
    expect((await post('/api/run', { input: 'x', script: 'script.yaml' })).status).toBe(202);
    expect((await post('/api/run', { input: 'x', script: 'missing.yaml' })).status).toBe(404);
  });

  it('checks a script against the pipeline before the task starts, as `troupe run --script` does', async () => {
    const before = await (await fetch(api('/api/tasks'))).json();
    for (const script of ['typo-script.yaml', { agents: { writr: ['draft'] } }]) {
      const { status, text } = await answer(await post('/api/run', { input: 'x', script }));
      expect(status).toBe(422);
      expect(codeOf(text)).toBe('script_invalid');
    }
    const after = await (await fetch(api('/api/tasks'))).json();
    expect(after).toEqual(before);
  });

  it("runs no command from a script sent inline (the red team's one-request H2), unless the project allows it", async () => {
    const marker = join(dir, 'pwned.txt');
    const inline = {
      input: 'go',
      script: { agents: { writer: [{ reply: 'x', run: ['touch', marker] }] } },
    };
    const { status, text } = await answer(await post('/api/run', inline));
    expect(status).toBe(422);
    expect(codeOf(text)).toBe('script_invalid');
    expect(text).toContain('run:');
    expect(existsSync(marker)).toBe(false);
    // the same script as a file of the project runs: its owner wrote it
    writeFileSync(
      join(dir, 'effects-script.yaml'),
      `agents:\n  writer:\n    - reply: x\n      run: [touch, ${marker}]\n`,
    );
    expect((await post('/api/run', { input: 'go', script: 'effects-script.yaml' })).status).toBe(202);
    await waitFor(() => (existsSync(marker) ? true : undefined), 20_000);
  });

  it('refuses imports and output_schema files outside the project in pipeline text', async () => {
    const content = `imports:
  - from: ${join(outside, 'secret.yaml')}
agents:
  - id: writer
    runtime: claude
    system_prompt: hi
    output_schema: ${join(outside, 'schema.json')}
`;
    const { status, text } = await answer(await post('/api/validate', { content }));
    expect(status).toBe(200);
    const messages = (JSON.parse(text) as { diagnostics: { message: string }[] }).diagnostics.map(
      (d) => d.message,
    );
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/cannot import .* outside the project/),
        expect.stringMatching(/output_schema file .* outside the project/),
      ]),
    );
    expect(text).not.toContain(SECRET);
  });

  it('does not list or serve a pipeline that is a symlink out of the project', async () => {
    const list = await answer(await fetch(api('/api/pipelines')));
    expect(list.text).not.toContain('linked');
    const yaml = await answer(await fetch(api('/api/pipelines/linked/yaml')));
    expect(yaml.status).toBe(404);
    expect(yaml.text).not.toContain(SECRET);
  });
});

describe('no internals in any response', () => {
  it('answers a NUL byte in a dashboard path with 404 and no path of this machine', async () => {
    const { status, text } = await answer(await fetch(`${server.url}index.html%00.js`));
    expect(status).toBe(404);
    expect(text).not.toContain(tmpdir());
    expect(text).not.toContain('dist');
  });
});

describe('malformed requests are 400s, not internal errors', () => {
  /** A request with a Host header of our choosing (fetch sets its own). */
  const withHost = (host: string, path: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const u = new URL(path, server.url);
      request({ host: u.hostname, port: u.port, path: u.pathname, headers: { Host: host } }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      })
        .on('error', reject)
        .end();
    });

  it('answers a Host that looks like the loopback but is no address (127.0.0.256) with 400', async () => {
    for (const host of ['127.0.0.256', '127.999.999.999', '127.0.0.256:8080']) {
      for (const path of ['/api/tasks', '/']) {
        const { status, text } = await withHost(host, path);
        expect(status, `${host} ${path}: ${text}`).toBe(400);
        expect(codeOf(text)).toBe('bad_request');
        expect(text).toContain('Host header');
      }
    }
    expect((await withHost(new URL(server.url).host, '/api/tasks')).status).toBe(200);
  });

  it('refuses an inline script nested 400,000 levels deep with 400, and one of ordinary depth runs', async () => {
    const depth = 400_000;
    const body = `{"input":"x","script":{"agents":{"writer":${'['.repeat(depth)}${']'.repeat(depth)}}}}`;
    const { status, text } = await answer(await post('/api/run', body));
    expect(status).toBe(400);
    expect(codeOf(text)).toBe('bad_request');
    expect(text).toContain('nests deeper than 100 levels');
    const fine = await post('/api/run', { input: 'x', script: { agents: { writer: ['draft'] } } });
    expect(fine.status).toBe(202);
  });
});

describe('request and input size limits', () => {
  it('refuses a body over 1 MiB with 413 too_large before reading it', async () => {
    const { status, text } = await answer(await post('/api/run', { input: 'A'.repeat(2 * 1024 * 1024) }));
    expect(status).toBe(413);
    expect(JSON.parse(text)).toMatchObject({
      error: { code: 'too_large', message: expect.stringContaining('over the 1 MiB limit') },
    });
  });

  it('refuses a task input over 256 KiB from the API and from the CLI', async () => {
    const big = 'A'.repeat(300 * 1024);
    const { status, text } = await answer(await post('/api/run', { input: big, script: 'script.yaml' }));
    expect(status).toBe(413);
    expect(codeOf(text)).toBe('too_large');
    expect(text).toContain('256 KiB limit');

    const words = [big.slice(0, 100 * 1024), big.slice(0, 100 * 1024), big.slice(0, 100 * 1024)];
    const cli = await troupe(dir, ['run', '--no-interactive', '--script', 'script.yaml', ...words]);
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain('the task input is 307202 bytes, over the 256 KiB limit');
    expect(cli.stderr).not.toContain('    at ');
  });
});
