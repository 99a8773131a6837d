import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Exit } from '../exit-codes.js';
import { setup } from './bus/setup.js';
import { launchCommand, sessionCreate, sessionList } from './live.js';
import { capturedIo, scratchProject } from './testing.js';

describe('troupe session and launch', () => {
  beforeEach(() => {
    for (const name of ['AM_ROOT', 'AM_ME', 'AM_SESSION', 'AM_BASE_ROOT']) vi.stubEnv(name, undefined);
    for (const cli of ['CLAUDE', 'GEMINI', 'CODEX']) vi.stubEnv(`TROUPE_${cli}_BIN`, '/nonexistent/cli');
  });
  afterEach(() => void vi.unstubAllEnvs());

  it('creates a session for the roster, lists it, and prints the commands to paste (exit 6)', async () => {
    const root = scratchProject();
    expect(await setup({ agents: 'alice:claude,bob:codex', yes: true }, capturedIo(root))).toBe(Exit.ok);

    const created = capturedIo(root);
    expect(await sessionCreate('review', {}, created)).toBe(Exit.ok);
    const [, sessionRoot] = created.stdout().match(/^session review: (\S+\/review)\n$/) ?? [];

    const listed = capturedIo(root);
    await sessionList({ json: true }, listed);
    expect(JSON.parse(listed.stdout())).toContainEqual(
      expect.objectContaining({ session: 'review', root: sessionRoot }),
    );

    const launched = capturedIo(root);
    expect(await launchCommand({ session: 'review', launcher: 'commands' }, launched)).toBe(
      Exit.actionRequired,
    );
    expect(launched.stdout()).toMatch(
      /^Paste each command into a terminal of its own \(session review\):\n\n# alice\n/,
    );
  });

  it('refuses a launcher it does not have', async () => {
    await expect(launchCommand({ launcher: 'screen' }, capturedIo(scratchProject()))).rejects.toThrow(
      "--launcher must be auto, cmux or ghostty or tmux or commands, not 'screen'",
    );
  });
});
