import { describe, expect, it } from 'vitest';
import { planDigest, planSetup, type SetupState } from './setup-plan.js';

const empty: SetupState = { projectDir: '/p', inGit: true, completeMailboxes: [], gitignoreLines: [] };

describe('the setup plan', () => {
  it('proposes one agent per CLI found, the person, and a default session', () => {
    const plan = planSetup({ detected: ['codex', 'claude'] }, empty);
    expect(plan.roster.map((r) => r.handle)).toEqual(['codex', 'claude', 'user']);
    expect(plan.default_session).toBe('collab');
    expect(plan.files.map((f) => `${f.action} ${f.path}`)).toEqual([
      'create .amqrc',
      'create .amq/launch.json',
      'create .amq/launch.local.json',
      'create .agent-mail/meta/config.json',
      'append .gitignore',
    ]);
    expect(plan.mailboxes).toContain('.agent-mail/collab/agents/user');
    // the launchers found, as AMQ proposes them; the mail and the preferences kept out of Git
    expect(plan.launcher_preference).toEqual(['commands']);
    expect(plan.files.at(-1)?.content).toBe('.agent-mail/\n.amq/launch.local.json\n');
  });

  it('keeps the local launcher preference unless one is given, and notes the launchers not found here', () => {
    const state: SetupState = {
      ...empty,
      localLaunch: { schema: 1, launcher_preference: ['ghostty', 'commands'] },
    };
    const kept = planSetup({ detected: ['claude'], availableLaunchers: ['tmux', 'commands'] }, state);
    expect(kept.launcher_preference).toEqual(['ghostty', 'commands']);
    expect(kept.notes).toEqual([
      "launcher 'ghostty' is not available here: launch --launcher auto passes it over",
    ]);
    const given = planSetup(
      {
        detected: ['claude'],
        availableLaunchers: ['tmux', 'commands'],
        launcherPreference: ['tmux', 'commands'],
      },
      state,
    );
    expect(given.launcher_preference).toEqual(['tmux', 'commands']);
    expect(given.notes).toEqual([]);
    expect(
      planSetup({ detected: ['claude'], availableLaunchers: ['tmux', 'commands'] }, empty)
        .launcher_preference,
    ).toEqual(['tmux', 'commands']);
  });

  it('has a digest that depends on the inputs and on the disk, and on nothing else', () => {
    const digest = planDigest(planSetup({ detected: ['claude'] }, empty));
    expect(planDigest(planSetup({ detected: ['claude'] }, { ...empty }))).toBe(digest);
    expect(planDigest(planSetup({ detected: ['claude'], session: 'pair' }, empty))).not.toBe(digest);
    expect(planDigest(planSetup({ detected: ['claude'] }, { ...empty, configAgents: ['old'] }))).not.toBe(
      digest,
    );
    expect(
      planDigest(
        planSetup({ detected: ['claude'] }, { ...empty, completeMailboxes: ['.agent-mail/agents/user'] }),
      ),
    ).not.toBe(digest);
  });

  it('keeps what is there: the .amqrc root, the committed roster, agents already configured', () => {
    const state: SetupState = {
      ...empty,
      amqrc: { text: '{"root":"mail"}', root: 'mail' },
      configAgents: ['planner'],
      launch: {
        schema: 1,
        default_session: 'work',
        agents: [
          {
            handle: 'rev',
            adapter: 'codex',
            command: ['codex', '--sandbox', 'workspace-write'],
            resume_policy: 'fresh',
          },
        ],
        layout: { type: 'rows' },
      },
    };
    const plan = planSetup({ detected: ['claude'] }, state);
    expect(plan.root).toBe('mail');
    expect(plan.default_session).toBe('work');
    expect(plan.roster.map((r) => r.handle)).toEqual(['rev', 'user']);
    expect(plan.config_agents).toEqual(['planner', 'rev']);
    expect(plan.files[0]).toMatchObject({ path: '.amqrc', action: 'keep' });
  });

  it('refuses a roster it cannot launch', () => {
    expect(() => planSetup({ detected: [] }, empty)).toThrow(/no agent CLI found/);
    expect(() => planSetup({ detected: [], agents: ['user'] }, empty)).toThrow(/always on the roster/);
    expect(() => planSetup({ detected: [], agents: ['a:claude', 'a:codex'] }, empty)).toThrow(
      /appears twice/,
    );
    expect(() => planSetup({ detected: ['claude'], session: 'Bad Name' }, empty)).toThrow(/invalid session/);
  });
});
