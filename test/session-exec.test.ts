import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type LiveProject, liveProject } from './support/live.js';

// `troupe session exec <agent>` — AMQ's `coop exec`, also as `troupe amq coop exec` — through the
// built CLI with the fake interactive CLIs (stdin closed, so each one starts, records and ends).

let project: LiveProject | undefined;
afterEach(() => project?.close());

describe('troupe session exec (AMQ coop exec)', () => {
  it("runs one agent here with the session's env and standing instruction, resumes its conversation next time, leaves the others alone", async () => {
    project = await liveProject();
    const p = project;
    expect((await p.run(['bus', 'setup', '--agents', 'claude,codex', '--yes'])).code).toBe(0);
    const first = await p.run(['session', 'exec', 'claude', '--', '--model', 'opus']);
    expect(first.code, first.stderr).toBe(0);
    // outside tmux the wake says it cannot notify, and the CLI still starts
    expect(first.stderr).toMatch(/not in tmux, cmux or a Ghostty terminal troupe opened, so no notices/);
    const starts = () => p.events().filter((e) => e.event === 'start');
    const started = starts()[0] as unknown as { cli: string; argv: string[]; env: Record<string, string> };
    expect(started.cli).toBe('claude');
    expect(started.env).toMatchObject({ AM_SESSION: 'collab', AM_ME: 'claude' });
    expect(started.argv).toEqual(expect.arrayContaining(['--session-id', '--append-system-prompt']));
    expect(started.argv.slice(-2)).toEqual(['--model', 'opus']);
    const id = started.argv[started.argv.indexOf('--session-id') + 1]!;
    const record = () =>
      JSON.parse(
        readFileSync(join(p.dir, '.agent-mail', 'collab', 'extensions', 'troupe', 'session.json'), 'utf8'),
      ) as { agents: Record<string, { conversation_id: string; launches: number }> };
    expect(Object.keys(record().agents)).toEqual(['claude']);

    // AMQ's spelling, unchanged: the same agent resumes its exact conversation
    const again = await p.run(['amq', 'coop', 'exec', '--session', 'collab', 'claude']);
    expect(again.code, again.stderr).toBe(0);
    expect((starts()[1] as { argv: string[] }).argv.slice(0, 2)).toEqual(['--resume', id]);
    expect(record().agents.claude).toMatchObject({ conversation_id: id, launches: 2 });

    const unknown = await p.run(['session', 'exec', 'nobody']);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toMatch(
      /^troupe: no agent 'nobody' in \.amq\/launch\.json \(agents: claude, codex\)/,
    );
    expect((await p.run(['session', 'exec', 'claude', '--session', 'nope'])).code).toBe(3);
  }, 60_000);
});
