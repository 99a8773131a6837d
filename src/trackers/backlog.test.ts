import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TrackerError } from '../core/tracker.js';
import { BacklogTracker, findBacklog, openBacklog, PROGRESS_NOTE_ID } from './backlog.js';
import { type SeedIssue, trackerContract } from './contract.js';

const FIXTURE = path.resolve(import.meta.dirname, '../../test/fixtures/backlog/project');
const PRIORITY_NAMES: Record<number, string> = { 1: 'high', 2: 'high', 3: 'medium', 4: 'low' };
const STATES = { active: 'To Do', working: 'In Progress', done: 'Done' } as const;
const NOW = () => new Date('2026-12-05T10:30:00Z');

const roots: string[] = [];
function scratch(): string {
  const root = mkdtempSync(path.join(tmpdir(), 'troupe-backlog-'));
  roots.push(root);
  return root;
}
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A project with the fixture backlog copied in (tests write to it). */
function fixtureProject(): { root: string; dir: string; task: (name: string) => string } {
  const root = scratch();
  cpSync(FIXTURE, root, { recursive: true });
  const dir = path.join(root, 'backlog');
  const task = (prefix: string) => {
    const name = readdirSync(path.join(dir, 'tasks')).find((n) => n.startsWith(`${prefix} `));
    if (!name) throw new Error(`no task file ${prefix}`);
    return path.join(dir, 'tasks', name);
  };
  return { root, dir, task };
}

/** A seeded issue as Backlog.md writes a task file. */
function taskFile(id: string, issue: SeedIssue, dependencies: string[]): string {
  const list = (items: string[]) => (items.length === 0 ? ' []' : items.map((i) => `\n  - ${i}`).join(''));
  const priority = issue.priority === null ? '' : `priority: ${PRIORITY_NAMES[issue.priority]}\n`;
  return `---
id: ${id}
title: ${issue.title}
status: ${STATES[issue.state]}
assignee: []
created_date: '2026-12-01 09:00'
labels:${list(issue.labels)}
dependencies:${list(dependencies)}
${priority}---

## Description

<!-- SECTION:DESCRIPTION:BEGIN -->
${issue.description}
<!-- SECTION:DESCRIPTION:END -->
`;
}

/** Reads troupe's notes back from the file itself, apart from the adapter's reader. */
function notesIn(text: string): string[] {
  const block = (name: string) =>
    new RegExp(`<!-- TROUPE:${name}:BEGIN -->\\n([\\s\\S]*?)<!-- TROUPE:${name}:END -->`)
      .exec(text)?.[1]
      ?.trim();
  const progress = block('PROGRESS');
  const links = (block('LINKS') ?? '').split('\n').filter((l) => l !== '');
  return [...(progress ? [progress] : []), ...links];
}

function frontMatter(text: string): string {
  return text.split('\n---\n')[0]!;
}

trackerContract('backlog', async (seed) => {
  const root = scratch();
  const dir = path.join(root, 'backlog');
  mkdirSync(path.join(dir, 'tasks'), { recursive: true });
  const ids = new Map(seed.map((issue, n) => [issue.key, `task-${n + 1}`]));
  const files = new Map<string, string>();
  for (const issue of seed) {
    const id = ids.get(issue.key)!;
    const file = path.join(dir, 'tasks', `${id} - ${issue.title.replace(/ /g, '-')}.md`);
    writeFileSync(
      file,
      taskFile(
        id,
        issue,
        issue.blocked_by.map((k) => ids.get(k)!),
      ),
    );
    files.set(id, file);
  }
  const read = (id: string) => readFileSync(files.get(id)!, 'utf8');
  return {
    tracker: new BacklogTracker(findBacklog(root)!, { now: NOW }),
    idOf: (key) => ids.get(key)!,
    states: STATES,
    comments: async (id) => notesIn(read(id)),
    state: async (id) => /^status: (.*)$/m.exec(read(id))![1]!,
    claimedBy: async (id) =>
      [...frontMatter(read(id)).matchAll(/^ {2}- (.*)$/gm)].map((m) => m[1]!).filter((v) => /troupe/.test(v)),
    close: async () => {},
  };
});

describe('backlog tracker on a Backlog.md folder', () => {
  it('is found at <root>/backlog without configuration, and not where there is no tasks/ folder', () => {
    const { root, dir } = fixtureProject();
    expect(findBacklog(root)).toBe(dir);
    const bare = scratch();
    mkdirSync(path.join(bare, 'backlog'));
    expect(findBacklog(bare)).toBeNull();
    mkdirSync(path.join(bare, '.backlog', 'tasks'), { recursive: true });
    expect(findBacklog(bare)).toBe(path.join(bare, '.backlog'));
  });

  it('follows a root backlog.config.yml as Backlog.md does: its backlog_directory inside the project, its statuses', async () => {
    const { root, dir } = fixtureProject();
    cpSync(dir, path.join(root, 'planning'), { recursive: true });
    writeFileSync(
      path.join(root, 'backlog.config.yml'),
      'backlog_directory: "planning"\nstatuses: [Open, Doing, Closed]\n',
    );
    const tracker = openBacklog(root, { now: NOW })!;
    expect(tracker.source).toBe(`backlog:${path.join(root, 'planning')}`);
    expect(await tracker.statuses()).toMatchObject({
      active: ['Open', 'Doing'],
      terminal: ['Closed'],
      working: 'Doing',
    });
    writeFileSync(path.join(root, 'backlog.config.yml'), 'backlog_directory: ../elsewhere\n');
    expect(findBacklog(root)).toBe(dir);
    expect(openBacklog(scratch())).toBeNull();
  });

  it('reads a real-looking task: sub-task ids, quoted titles, priorities, blockers in completed/, dates', async () => {
    const { dir } = fixtureProject();
    const tracker = new BacklogTracker(dir);
    const issues = await tracker.candidates();
    // BACK-355.02 is assigned to a person; drafts and archived tasks are never offered
    expect(issues.map((i) => i.id)).toEqual(['BACK-355', 'BACK-355.01']);
    const sub = issues[1]!;
    expect(sub).toEqual({
      id: 'BACK-355.01',
      identifier: 'BACK-355.01',
      title: 'Core: Add type field to task domain model and persistence',
      description:
        'Add the `type` field to the task model and keep it in the front matter.\n\nIt is the base the other sub-tasks build on.',
      priority: 3,
      state: 'To Do',
      labels: ['core'],
      blocked_by: [
        { id: 'BACK-350', identifier: 'BACK-350', state: 'Done' },
        { id: 'BACK-355.02', identifier: 'BACK-355.02', state: 'In Progress' },
      ],
      url: null,
      created_at: '2026-01-01T23:37:00.000Z',
      updated_at: '2026-05-11T14:01:00.000Z',
    });
    expect(issues[0]).toMatchObject({ priority: 2, labels: ['core', 'enhancement'] });
    expect(tracker.problems).toEqual([]);
    // ids match as Backlog.md matches them: case aside, numbers as numbers
    const states = await tracker.states([
      'back-355.1',
      'BACK-350',
      'BACK-340',
      'DRAFT-1',
      '../../etc/passwd',
    ]);
    expect([...states.values()]).toEqual(['To Do', 'Done', null, null, null]);
    expect(
      (await new BacklogTracker(dir, { includeAssigned: true }).candidates()).map((i) => i.id),
    ).toContain('BACK-355.02');
    expect(
      (await new BacklogTracker(dir, { labels: ['Enhancement'] }).candidates()).map((i) => i.id),
    ).toEqual(['BACK-355']);
  });

  it('keeps every byte it does not own: only status, assignee and updated_date change, notes go in its own section', async () => {
    const { dir, task } = fixtureProject();
    const file = task('back-355.01');
    const before = readFileSync(file, 'utf8');
    const tracker = new BacklogTracker(dir, { now: NOW });
    await tracker.claim('BACK-355.01', 'troupe');
    const claimed = readFileSync(file, 'utf8');
    expect(claimed).toBe(
      before
        .replace('status: To Do', 'status: In Progress')
        .replace('assignee: []', 'assignee:\n  - troupe')
        .replace("updated_date: '2026-05-11 14:01'", "updated_date: '2026-12-05 10:30'"),
    );
    const id = await tracker.upsertComment('BACK-355.01', 'troupe: planning', null);
    expect(id).toBe(PROGRESS_NOTE_ID);
    await tracker.upsertComment(
      'BACK-355.01',
      'troupe: building (stage 2)\n# not a heading <!-- TROUPE:PROGRESS:END -->',
      id,
    );
    await tracker.linkPullRequest('BACK-355.01', 'https://example.test/pr/7');
    await tracker.linkPullRequest('BACK-355.01', 'https://example.test/pr/7');
    const noted = readFileSync(file, 'utf8');
    expect(noted.startsWith(claimed)).toBe(true);
    expect(noted.slice(claimed.length)).toBe(
      [
        '',
        '## Troupe',
        '',
        '<!-- TROUPE:PROGRESS:BEGIN -->',
        'troupe: building (stage 2)',
        '\\# not a heading &lt;!-- TROUPE:PROGRESS:END -->',
        '<!-- TROUPE:PROGRESS:END -->',
        '',
        '<!-- TROUPE:LINKS:BEGIN -->',
        '- Pull request: https://example.test/pr/7',
        '<!-- TROUPE:LINKS:END -->',
        '',
      ].join('\n'),
    );
    await tracker.release('BACK-355.01', 'troupe');
    await tracker.moveTo('BACK-355.01', 'done');
    const released = readFileSync(file, 'utf8');
    expect(frontMatter(released)).toBe(
      frontMatter(before)
        .replace('status: To Do', 'status: Done')
        .replace("'2026-05-11 14:01'", "'2026-12-05 10:30'"),
    );
    // Backlog.md's own sections are untouched
    expect(released.split('\n---\n')[1]!.split('\n## Troupe\n')[0]).toBe(before.split('\n---\n')[1]);
  });

  it('loses no write when a note, a link and a move of one task run at once', async () => {
    const { dir, task } = fixtureProject();
    const tracker = new BacklogTracker(dir, { now: NOW });
    await Promise.all([
      tracker.upsertComment('BACK-355.01', 'troupe: completed', null),
      tracker.linkPullRequest('BACK-355.01', 'https://example.test/pr/8'),
      tracker.moveTo('BACK-355.01', 'done'),
      tracker.claim('BACK-355.01', 'troupe'),
    ]);
    const text = readFileSync(task('back-355.01'), 'utf8');
    expect(notesIn(text)).toEqual(['troupe: completed', '- Pull request: https://example.test/pr/8']);
    expect(frontMatter(text)).toMatch(/^status: Done$/m);
    expect(frontMatter(text)).toMatch(/^assignee:\n {2}- troupe$/m);
  });

  it('adds a missing updated_date where Backlog.md writes it and keeps CRLF files CRLF', async () => {
    const { dir, task } = fixtureProject();
    const file = task('back-355.02');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/\n/g, '\r\n'));
    const tracker = new BacklogTracker(dir, { now: NOW, includeAssigned: true });
    await tracker.claim('BACK-355.02', '@troupe');
    await tracker.upsertComment('BACK-355.02', 'troupe: started', null);
    const text = readFileSync(file, 'utf8');
    expect(text.replace(/\r\n/g, '')).not.toContain('\n');
    expect(text).toContain(
      "assignee:\r\n  - '@sara'\r\n  - '@troupe'\r\ncreated_date: '2026-01-01 23:38'\r\nupdated_date: '2026-12-05 10:30'\r\nlabels:",
    );
    expect(text).toContain(
      '<!-- TROUPE:PROGRESS:BEGIN -->\r\ntroupe: started\r\n<!-- TROUPE:PROGRESS:END -->\r\n',
    );
    // already In Progress: claiming does not move it; releasing with @sara still on it leaves it there
    await tracker.release('BACK-355.02', 'troupe');
    expect(readFileSync(file, 'utf8')).toContain("assignee:\r\n  - '@sara'\r\ncreated_date");
    expect((await tracker.states(['BACK-355.02'])).get('BACK-355.02')).toBe('In Progress');
  });

  it('skips a malformed or huge file with a located error, and goes on with the others', async () => {
    const { dir } = fixtureProject();
    const tasks = path.join(dir, 'tasks');
    writeFileSync(
      path.join(tasks, 'back-400 - Broken.md'),
      '---\nid: BACK-400\ntitle: Broken\nlabels: [unclosed\nstatus: To Do\n---\n',
    );
    writeFileSync(path.join(tasks, 'back-401 - No-front-matter.md'), '# just markdown\n');
    writeFileSync(
      path.join(tasks, 'back-402 - Huge.md'),
      `---\nid: BACK-402\n---\n${'x'.repeat(1024 * 1024)}`,
    );
    writeFileSync(
      path.join(tasks, 'back-403 - Bomb.md'),
      `---\nid: BACK-403\na: &a [${'x,'.repeat(50)}x]\nb: &b [${'*a,'.repeat(50)}*a]\nc: &c [${'*b,'.repeat(50)}*b]\nd: [${'*c,'.repeat(50)}*c]\n---\n`,
    );
    writeFileSync(
      path.join(tasks, 'back-404 - Nested-status.md'),
      '---\nid: BACK-404\ntitle: Nested\nstatus:\n  a: b\n---\n',
    );
    const seen: TrackerError[] = [];
    const tracker = new BacklogTracker(dir, { onProblem: (p) => seen.push(p) });
    expect((await tracker.candidates()).map((i) => i.id)).toEqual(['BACK-355', 'BACK-355.01']);
    const messages = tracker.problems.map((p) => p.message);
    expect(seen.map((p) => p.message)).toEqual(messages);
    expect(tracker.problems.every((p) => p instanceof TrackerError && p.kind === 'invalid')).toBe(true);
    expect(messages).toHaveLength(5);
    expect(messages[0]).toMatch(/^backlog\/tasks\/back-400 - Broken\.md:[45]: YAML syntax error/);
    expect(messages[1]).toMatch(/^backlog\/tasks\/back-401 - No-front-matter\.md:1: no front matter/);
    expect(messages[2]).toMatch(/^backlog\/tasks\/back-402 - Huge\.md:1: \d+ bytes, over the 1 MiB/);
    expect(messages[3]).toMatch(/^backlog\/tasks\/back-403 - Bomb\.md:\d+: YAML aliases/);
    expect(messages[4]).toBe('backlog/tasks/back-404 - Nested-status.md:4: `status` must be a single value');
    await expect(tracker.claim('BACK-400', 'troupe')).rejects.toMatchObject({ kind: 'invalid' });
    expect(readFileSync(path.join(tasks, 'back-400 - Broken.md'), 'utf8')).toContain('[unclosed');
  });

  it('reads files built to make a pattern backtrack in linear time', async () => {
    const { dir } = fixtureProject();
    const tasks = path.join(dir, 'tasks');
    const markers = '<!-- SECTION:DESCRIPTION:BEGIN -->\n'.repeat(25_000);
    writeFileSync(
      path.join(tasks, 'back-700 - Markers.md'),
      `---\nid: BACK-700\ntitle: Markers\n---\n${markers}`,
    );
    writeFileSync(
      path.join(tasks, 'back-701 - Blanks.md'),
      `---\nid: BACK-701\ntitle: Blanks\nassignee: ${' '.repeat(400_000)}x\n---\n`,
    );
    const tracker = new BacklogTracker(dir, { includeAssigned: true });
    const started = performance.now();
    const ids = (await tracker.candidates()).map((i) => i.id);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(ids).toEqual(expect.arrayContaining(['BACK-700', 'BACK-701']));
  });

  it('never follows a symlink out of the backlog, and refuses ids that name paths', async () => {
    const { root, dir, task } = fixtureProject();
    const outside = path.join(root, 'secret.md');
    const secret = readFileSync(task('back-355'), 'utf8').replace(/BACK-355/g, 'BACK-500');
    writeFileSync(outside, secret);
    symlinkSync(outside, path.join(dir, 'tasks', 'back-500 - Linked.md'));
    const tracker = new BacklogTracker(dir, { now: NOW });
    expect((await tracker.candidates()).map((i) => i.id)).not.toContain('BACK-500');
    expect(tracker.problems.map((p) => p.message)).toEqual([
      expect.stringMatching(/back-500 - Linked\.md:1: a symlink; skipped/),
    ]);
    await expect(tracker.claim('BACK-500', 'troupe')).rejects.toMatchObject({ kind: 'not_found' });
    await expect(tracker.moveTo('../secret', 'Done')).rejects.toMatchObject({ kind: 'invalid' });
    await expect(tracker.claim('BACK-355', 'evil\nstatus: Done')).rejects.toMatchObject({ kind: 'invalid' });
    await expect(tracker.linkPullRequest('BACK-355', 'javascript:alert(1)')).rejects.toMatchObject({
      kind: 'invalid',
    });
    expect(readFileSync(outside, 'utf8')).toBe(secret);
    // a tasks/ folder that is itself a link out of the backlog is not read at all
    const elsewhere = scratch();
    const linked = scratch();
    mkdirSync(path.join(elsewhere, 'tasks'));
    writeFileSync(path.join(elsewhere, 'tasks', 'task-1 - Out.md'), secret.replace(/BACK-500/g, 'task-1'));
    mkdirSync(path.join(linked, 'backlog'));
    symlinkSync(path.join(elsewhere, 'tasks'), path.join(linked, 'backlog', 'tasks'));
    const out = new BacklogTracker(path.join(linked, 'backlog'));
    expect(await out.candidates()).toEqual([]);
    expect(out.problems.map((p) => p.message)).toEqual([
      'backlog/tasks:1: leads out of the backlog folder; skipped',
    ]);
  });

  it("takes its statuses from config.yml: active, terminal, hand-off and claim's working status", async () => {
    const { dir, task } = fixtureProject();
    writeFileSync(
      path.join(dir, 'config.yml'),
      'project_name: x\ndefault_status: Backlog\nstatuses: [Backlog, Doing, Review, Shipped]\n',
    );
    const file = task('back-355');
    writeFileSync(file, readFileSync(file, 'utf8').replace('status: To Do\n', ''));
    writeFileSync(
      task('back-355.01'),
      readFileSync(task('back-355.01'), 'utf8').replace('status: To Do', 'status: Review'),
    );
    const tracker = new BacklogTracker(dir, { now: NOW });
    expect(await tracker.statuses()).toEqual({
      all: ['Backlog', 'Doing', 'Review', 'Shipped'],
      active: ['Backlog', 'Doing', 'Review'],
      terminal: ['Shipped'],
      handOff: 'Shipped',
      working: 'Doing',
      default: 'Backlog',
    });
    // a task with no status is in default_status
    expect((await tracker.candidates()).map((i) => [i.id, i.state])).toEqual([
      ['BACK-355', 'Backlog'],
      ['BACK-355.01', 'Review'],
    ]);
    await tracker.claim('BACK-355', 'troupe');
    expect(readFileSync(file, 'utf8')).toMatch(/^title: .*\nstatus: Doing\nassignee:\n {2}- troupe\n/m);
    await tracker.release('BACK-355', 'troupe');
    expect(readFileSync(file, 'utf8')).toContain('status: Backlog\nassignee: []\n');
    await expect(tracker.moveTo('BACK-355', 'Done')).rejects.toThrow(
      /"Done" is not a status of this backlog \(Backlog, Doing, Review, Shipped\)/,
    );
    const review = new BacklogTracker(dir, {
      active: ['backlog', 'doing'],
      handOff: 'review',
      working: null,
    });
    expect(await review.statuses()).toMatchObject({
      active: ['Backlog', 'Doing'],
      handOff: 'Review',
      working: null,
    });
    expect((await review.candidates()).map((i) => i.id)).toEqual(['BACK-355']);
    writeFileSync(path.join(dir, 'config.yml'), 'statuses: To Do\n');
    await expect(tracker.candidates()).rejects.toThrow(/^backlog\/config.yml:1: `statuses` must be a list/);
  });

  it('quotes a hand-written `assignee: @sara` as Backlog.md does, and finds a file by the id inside', async () => {
    const { dir, task } = fixtureProject();
    const renamed = path.join(dir, 'tasks', 'back-600 - Renamed-by-hand.md');
    writeFileSync(
      renamed,
      readFileSync(task('back-355.02'), 'utf8')
        .replace("assignee:\n  - '@sara'", 'assignee: @sara')
        .replace('BACK-355.02', 'BACK-601')
        .replace("created_date: '2026-01-01 23:38'", "created_date: '2026-01-01 23:38' # by hand"),
    );
    const tracker = new BacklogTracker(dir, { now: NOW, includeAssigned: true });
    expect((await tracker.candidates()).find((i) => i.id === 'BACK-601')).toMatchObject({
      state: 'In Progress',
    });
    await tracker.claim('back-601', 'troupe');
    expect(readFileSync(renamed, 'utf8')).toContain("assignee:\n  - '@sara'\n  - troupe\n");
    expect(readFileSync(renamed, 'utf8')).toContain(
      "created_date: '2026-01-01 23:38' # by hand\nupdated_date: '2026-12-05 10:30'\n",
    );
  });

  it('refuses to edit a front matter it cannot change line by line, and leaves the file as it was', async () => {
    const { dir } = fixtureProject();
    const file = path.join(dir, 'tasks', 'back-800 - Flow.md');
    const flow = '---\n{id: BACK-800, title: Flow, status: To Do, assignee: []}\n---\n\nBody.\n';
    writeFileSync(file, flow);
    const tracker = new BacklogTracker(dir, { now: NOW });
    expect((await tracker.candidates()).map((i) => i.id)).toContain('BACK-800');
    await expect(tracker.claim('BACK-800', 'troupe')).rejects.toMatchObject({ kind: 'invalid' });
    expect(readFileSync(file, 'utf8')).toBe(flow);
  });

  it('refuses a note id that is not its progress note, and a note over 64 KiB', async () => {
    const { dir } = fixtureProject();
    const tracker = new BacklogTracker(dir);
    await expect(tracker.upsertComment('BACK-355', 'x', 'comment-9')).rejects.toMatchObject({
      kind: 'not_found',
    });
    await expect(tracker.upsertComment('BACK-355', 'x'.repeat(65 * 1024), null)).rejects.toMatchObject({
      kind: 'invalid',
    });
    await expect(tracker.upsertComment('BACK-999', 'x', null)).rejects.toMatchObject({ kind: 'not_found' });
  });
});
