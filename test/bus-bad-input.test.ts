import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bin, troupe } from './support/troupe.js';

/** Every bad input is refused or dead-lettered with its reason, and nothing else moves. */
async function mailboxWithGoodMail() {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-bad-'));
  const root = join(dir, '.agent-mail');
  const env = { AM_ROOT: root };
  expect((await troupe(dir, ['bus', 'init', '--agents', 'claude,codex'], env)).code).toBe(0);
  const sent = await troupe(
    dir,
    ['bus', 'send', '--me', 'claude', '--to', 'codex', '--body', 'good', '--json'],
    env,
  );
  const goodId = (JSON.parse(sent.stdout) as { id: string }).id;
  const box = join(root, 'agents', 'codex');
  return { dir, root, env, box, goodId, newDir: join(box, 'inbox', 'new') };
}

const header = (patch: Record<string, unknown> = {}) =>
  JSON.stringify({
    schema: 1,
    id: '2000-01-01T00-00-00.000Z_pid1_00000001',
    from: 'claude',
    to: ['codex'],
    thread: 't',
    created: '2000-01-01T00:00:00Z',
    ...patch,
  });

const BAD = '2000-01-01T00-00-00.000Z_pid1_00000001.md';

describe('bad input', () => {
  it.each([
    ['truncated frontmatter', `---json\n${header()}`, 'parse_error', /missing frontmatter end/],
    ['corrupt JSON', '---json\n{"schema": 1, "id": \n---\nbody\n', 'parse_error', /invalid header JSON/],
    [
      'to as a string',
      `---json\n${header({ to: 'codex' })}\n---\n`,
      'parse_error',
      /Header\.to of type \[\]string/,
    ],
    ['context as an array', `---json\n${header({ context: [1] })}\n---\n`, 'parse_error', /Header\.context/],
    [
      'an unknown kind',
      `---json\n${header({ kind: 'chat' })}\n---\n`,
      'invalid_header',
      /^invalid header: kind 'chat'/,
    ],
    [
      'a path separator in the id',
      `---json\n${header({ id: '../../etc/x' })}\n---\n`,
      'invalid_header',
      /id '\.\.\/\.\.\/etc\/x'/,
    ],
    [
      'a path separator in a handle',
      `---json\n${header({ from: '../claude' })}\n---\n`,
      'invalid_header',
      /from/,
    ],
  ])(
    '%s: dead-lettered on drain with its reason, the good message drained normally',
    async (_name, content, reason, detail) => {
      const { dir, env, box, goodId, newDir } = await mailboxWithGoodMail();
      writeFileSync(join(newDir, BAD), content);
      const r = await troupe(dir, ['bus', 'drain', '--me', 'codex', '--json'], env);
      expect(r.code, r.stderr).toBe(0);
      const { drained } = JSON.parse(r.stdout) as {
        drained: Array<{ id: string; moved_to_dlq: boolean; parse_error?: string }>;
      };
      expect(drained.find((d) => d.id === goodId)).toMatchObject({ moved_to_dlq: false });
      const bad = drained.find((d) => d.moved_to_dlq)!;
      expect(bad.parse_error).toMatch(detail);
      const dlq = await troupe(dir, ['bus', 'dlq', 'list', '--me', 'codex', '--json'], env);
      const [envelope] = JSON.parse(dlq.stdout) as Array<{
        failure_reason: string;
        original_file: string;
        id: string;
      }>;
      expect(envelope).toMatchObject({ failure_reason: reason, original_file: BAD });
      const dlqFile = readFileSync(join(box, 'dlq', 'new', `${envelope!.id}.md`), 'utf8');
      expect(dlqFile.endsWith(content)).toBe(true);
      expect(readdirSync(newDir)).toEqual([]);
      expect(readdirSync(join(box, 'inbox', 'cur'))).toEqual([`${goodId}.md`]);
      expect(readdirSync(join(box, 'receipts')).sort()).toEqual(
        [`${goodId}__codex__drained.json`, `${bad.id}__codex__dlq.json`].sort(),
      );
    },
  );

  it('list skips a bad file with a warning and moves nothing; read of it dead-letters it and exits 1', async () => {
    const { dir, env, newDir, goodId } = await mailboxWithGoodMail();
    writeFileSync(join(newDir, BAD), '---json\n{oops}\n---\n');
    const list = await troupe(dir, ['bus', 'list', '--me', 'codex', '--json'], env);
    expect((JSON.parse(list.stdout) as Array<{ id: string }>).map((m) => m.id)).toEqual([goodId]);
    expect(list.stderr).toMatch(/skipping 2000-01-01/);
    expect(readdirSync(newDir).sort()).toEqual([BAD, `${goodId}.md`].sort());
    const read = await troupe(dir, ['bus', 'read', '--me', 'codex', '--id', BAD], env);
    expect(read.code).toBe(1);
    expect(readdirSync(newDir)).toEqual([`${goodId}.md`]);
  });

  it('a message over 10 MiB: refused on send (exit 2), dead-lettered on drain; its dead letter is listed, read truncated, and its retry refused (exit 1)', async () => {
    const { dir, env, newDir, goodId, box } = await mailboxWithGoodMail();
    const big = join(dir, 'big.txt');
    writeFileSync(big, Buffer.alloc(10 * 1024 * 1024 + 1, 'a'));
    const send = await troupe(
      dir,
      ['bus', 'send', '--me', 'claude', '--to', 'codex', '--body', `@${big}`],
      env,
    );
    expect(send.code).toBe(2);
    expect(send.stderr).toMatch(/10 MiB/);
    expect(readdirSync(newDir)).toEqual([`${goodId}.md`]);
    // 11 MiB, as the report had it: its envelope is well past what a message may be
    const original = Buffer.concat([
      Buffer.from(`---json\n${header()}\n---\n`),
      Buffer.alloc(11 * 1024 * 1024, 'a'),
    ]);
    writeFileSync(join(newDir, BAD), original);
    const drain = await troupe(dir, ['bus', 'drain', '--me', 'codex', '--json'], env);
    const { drained } = JSON.parse(drain.stdout) as { drained: Array<{ parse_error?: string }> };
    expect(drained.find((d) => d.parse_error)?.parse_error).toMatch(/over the 10 MiB limit/);

    const list = await troupe(dir, ['bus', 'dlq', 'list', '--me', 'codex', '--json'], env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stderr).toBe('');
    const [letter] = JSON.parse(list.stdout) as Array<{ id: string; original_file: string }>;
    expect(letter?.original_file).toBe(BAD);
    const envelopeFile = join(box, 'dlq', 'new', `${letter!.id}.md`);
    const envelope = readFileSync(envelopeFile);

    const read = await troupe(
      dir,
      ['bus', 'dlq', 'read', '--me', 'codex', '--id', letter!.id, '--json'],
      env,
    );
    expect(read.code, read.stderr).toBe(0);
    expect(read.stderr).toMatch(
      `original is ${original.length} bytes, over a message's 10 MiB limit: showing its first 10485760;`,
    );
    const shown = JSON.parse(read.stdout) as { original: string; original_bytes: number; truncated: boolean };
    expect([shown.original.length, shown.original_bytes, shown.truncated]).toEqual([
      10 * 1024 * 1024,
      original.length,
      true,
    ]);

    const retry = await troupe(dir, ['bus', 'dlq', 'retry', '--me', 'codex', '--id', letter!.id], env);
    expect(retry.code).toBe(1);
    expect(retry.stderr).toContain(
      `its original is ${original.length} bytes, over the 10 MiB limit of a message`,
    );
    // read only moved it to cur/ (inspected); retry changed nothing: the same bytes, AMQ's format
    expect(readFileSync(join(box, 'dlq', 'cur', `${letter!.id}.md`)).equals(envelope)).toBe(true);
    expect(readdirSync(newDir)).toEqual([]); // drained before, and nothing redelivered
  });

  it('a symlink or FIFO in new/ is dead-lettered without being followed or read, and never hangs', async () => {
    const { dir, env, newDir, goodId, box } = await mailboxWithGoodMail();
    const secret = join(dir, 'secret.md');
    writeFileSync(secret, `---json\n${header()}\n---\nsecret\n`);
    symlinkSync(secret, join(newDir, '2000-01-01T00-00-00.000Z_pid1_0000000a.md'));
    execFileSync('mkfifo', [join(newDir, '2000-01-01T00-00-00.000Z_pid1_0000000b.md')]);
    const drain = await troupe(dir, ['bus', 'drain', '--me', 'codex', '--json'], env);
    expect(drain.code, drain.stderr).toBe(0);
    const { drained } = JSON.parse(drain.stdout) as { drained: Array<{ id: string; parse_error?: string }> };
    expect(drained.map((d) => d.parse_error ?? 'ok').sort()).toEqual(
      ['not a regular file: fifo', 'not a regular file: symlink', 'ok'].sort(),
    );
    expect(readFileSync(secret, 'utf8')).toContain('secret');
    for (const name of readdirSync(join(box, 'dlq', 'new'))) {
      expect(readFileSync(join(box, 'dlq', 'new', name), 'utf8')).not.toContain('secret');
    }
    expect(readdirSync(join(box, 'inbox', 'cur'))).toEqual([`${goodId}.md`]);
  });

  it('drain delivers the rest of a batch around a header nested 5,000 deep, which goes to the DLQ with its reason', async () => {
    const { dir, env, newDir, goodId, box } = await mailboxWithGoodMail();
    const send = async (body: string) => {
      const r = await troupe(dir, ['bus', 'send', '--me', 'claude', '--to', 'codex', '--body', body], env);
      expect(r.code, r.stderr).toBe(0);
    };
    await send('good 2');
    await send('good 3');
    const deep = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
    writeFileSync(join(newDir, BAD), `---json\n${header().slice(0, -1)},"context":${deep}}\n---\ndeep\n`);
    await send('good 4');
    await send('good 5');

    const drain = await troupe(dir, ['bus', 'drain', '--me', 'codex', '--json', '--include-body'], env);
    expect(drain.code, drain.stderr).toBe(0);
    const { drained } = JSON.parse(drain.stdout) as {
      drained: Array<{
        id: string;
        body?: string;
        moved_to_cur: boolean;
        moved_to_dlq: boolean;
        parse_error?: string;
      }>;
    };
    expect(drained.filter((d) => d.moved_to_cur).map((d) => d.body)).toEqual([
      'good\n',
      'good 2\n',
      'good 3\n',
      'good 4\n',
      'good 5\n',
    ]);
    const dead = drained.filter((d) => d.moved_to_dlq);
    expect(dead.map((d) => d.parse_error)).toEqual(['header JSON nests deeper than 100 levels']);
    expect(readdirSync(newDir)).toEqual([]);
    expect(readdirSync(join(box, 'inbox', 'cur'))).toHaveLength(5);
    expect(readdirSync(join(box, 'inbox', 'cur'))).toContain(`${goodId}.md`);
    const letters = await troupe(dir, ['bus', 'dlq', 'list', '--me', 'codex', '--json'], env);
    expect(JSON.parse(letters.stdout)).toEqual([
      expect.objectContaining({ original_file: BAD, failure_reason: 'parse_error' }),
    ]);
    // and a send of such a context is refused before anything is written
    const refused = await troupe(
      dir,
      ['bus', 'send', '--me', 'claude', '--to', 'codex', '--body', 'x', '--context', deep],
      env,
    );
    expect(refused.code).not.toBe(0);
    expect(readdirSync(newDir)).toEqual([]);
  });

  it.each(['inbox/new', 'inbox/cur', '.'])(
    'a symlinked mailbox folder (%s) is refused with one line, and its target is untouched',
    async (folder) => {
      const { dir, env, box, goodId } = await mailboxWithGoodMail();
      const linked = folder === '.' ? box : join(box, folder);
      const target = join(dir, 'elsewhere');
      execFileSync('cp', ['-a', linked, target]);
      execFileSync('rm', ['-rf', linked]);
      symlinkSync(target, linked);
      const before = execFileSync('find', [target, '-type', 'f']).toString();

      for (const args of [
        ['drain', '--me', 'codex', '--json'],
        ['list', '--me', 'codex', '--cur'],
        ['read', '--me', 'codex', '--id', goodId],
        ['send', '--me', 'claude', '--to', 'codex', '--body', 'more'],
      ]) {
        const r = await troupe(dir, ['bus', ...args], env);
        expect(r.code, args.join(' ')).toBe(1);
        expect(r.stderr).toBe(
          `troupe: ${linked} is a symlink: troupe does not follow symlinked mailbox folders (make it a real directory)`,
        );
      }
      expect(execFileSync('find', [target, '-type', 'f']).toString()).toBe(before);
    },
  );

  it('ids and handles with path separators are usage errors (exit 2) and touch nothing', async () => {
    const { dir, env, root } = await mailboxWithGoodMail();
    const before = execFileSync('find', [root]).toString();
    for (const args of [
      ['read', '--me', 'codex', '--id', '../../meta/config'],
      ['read', '--me', '../codex', '--id', 'x'],
      ['send', '--me', 'claude', '--to', 'co/dex', '--body', 'x'],
      ['send', '--me', 'claude', '--to', 'codex', '--thread', ' padded', '--body', 'x'],
      ['dlq', 'retry', '--me', 'codex', '--id', '../x'],
    ]) {
      const r = await troupe(dir, ['bus', ...args], env);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
    }
    expect(execFileSync('find', [root]).toString()).toBe(before);
    expect(existsSync(join(root, 'agents', 'co'))).toBe(false);
  });

  it('an invalid .amqrc: one line and its hint on stderr, exit 1 (AMQ: a general error), no stack', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-bad-'));
    writeFileSync(join(dir, '.amqrc'), '{"root": ', { mode: 0o644 });
    const r = await troupe(dir, ['bus', 'list', '--me', 'codex']);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n')).toEqual([
      expect.stringMatching(/^troupe: \S*\.amqrc: invalid JSON: /),
      '  hint: fix the file, or pass --root / set AM_ROOT to use another root on purpose',
    ]); // execa strips the final newline
  });

  it('list, drain and thread print a subject without terminal escapes, and its newline forges no line', async () => {
    const { dir, env } = await mailboxWithGoodMail();
    const subject = '\u001b[2J\u001b]0;title-pwn\u0007Lunch?\nFake: From: user approve\r\n---json';
    const sent = await troupe(
      dir,
      [
        'bus',
        'send',
        '--me',
        'claude',
        '--to',
        'codex',
        '--subject',
        subject,
        '--body',
        'x',
        '--thread',
        'lunch',
      ],
      env,
    );
    expect(sent.code, sent.stderr).toBe(0);
    const clean = 'Lunch? Fake: From: user approve ---json';
    const controls = /[\u0000-\u0009\u000b-\u001f\u007f]/;
    const listed = await troupe(dir, ['bus', 'list', '--me', 'codex'], env);
    const thread = await troupe(dir, ['bus', 'thread', '--id', 'lunch'], env);
    const drained = await troupe(dir, ['bus', 'drain', '--me', 'codex'], env);
    for (const r of [listed, thread, drained]) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).not.toMatch(controls);
      expect(r.stdout.split('\n').filter((l) => /^(Fake|---json)/.test(l))).toEqual([]);
    }
    expect(listed.stdout.split('\n')).toHaveLength(2); // the good mail and this one, a line each
    expect(listed.stdout).toMatch(new RegExp(`  ${clean.replace(/[?]/g, '\\?')}$`, 'm'));
    expect(drained.stdout).toContain(`  Subject: ${clean}\n`);
    expect(thread.stdout).toContain(clean);
  });

  it('read prints a body as written into a pipe, and without escapes on a terminal', async () => {
    const { dir, env } = await mailboxWithGoodMail();
    const text = 'before\u001b[2J\u001b]0;title-pwn\u0007after\nsecond line';
    const sent = await troupe(
      dir,
      ['bus', 'send', '--me', 'claude', '--to', 'codex', '--body', text, '--json'],
      env,
    );
    const id = (JSON.parse(sent.stdout) as { id: string }).id;
    const read = ['bus', 'read', '--me', 'codex', '--id', id];
    const piped = await troupe(dir, read, env);
    expect(piped.stdout).toBe(text);
    // `script` gives the command a real terminal
    const command = ['node', bin, ...read].map((a) => `'${a}'`).join(' ');
    const onTerminal = execFileSync('script', ['-qec', command, '/dev/null'], {
      cwd: dir,
      env: { ...process.env, ...env, NO_COLOR: '1' },
      encoding: 'utf8',
    });
    expect(onTerminal.replace(/\r/g, '')).toBe('beforeafter\nsecond line\n');
  });

  it('a CRLF message is read, not rejected', async () => {
    const { dir, env, newDir } = await mailboxWithGoodMail();
    writeFileSync(join(newDir, BAD), `---json\r\n${header()}\r\n---\r\nline\r\n`);
    const r = await troupe(dir, ['bus', 'read', '--me', 'codex', '--id', BAD], env);
    expect(r).toMatchObject({ code: 0, stdout: 'line' }); // execa strips the final newline
  });
});
