import { createHash } from 'node:crypto';
import { goJson, sortMaps } from '../bus/go-json.js';
import { HUMAN, parseHandle } from '../bus/handle.js';
import { UsageError } from '../core/errors.js';
import { RUNTIMES, spellList } from '../core/runtimes.js';
import {
  ADAPTERS,
  type Adapter,
  isAdapter,
  isValidSession,
  LAUNCH_FILE,
  type LaunchAgent,
  type LaunchConfig,
} from './launch-config.js';
import { LAUNCH_LOCAL_FILE, type LauncherName, type LocalLaunchConfig } from './launcher-preference.js';

/** What is on disk now, as far as the plan depends on it (read by setup-state.ts). */
export interface SetupState {
  projectDir: string;
  /** The project is a Git worktree top: the mail root is kept out of commits. */
  inGit: boolean;
  amqrc?: { text: string; root: string };
  launch?: LaunchConfig;
  launchText?: string;
  localLaunch?: LocalLaunchConfig;
  localLaunchText?: string;
  /** Agents of `<root>/meta/config.json`, when it exists. */
  configAgents?: string[];
  /** Mailboxes (`<root-relative dir>`) whose eight leaves all exist. */
  completeMailboxes: string[];
  gitignoreLines: string[];
}

export interface SetupRequest {
  /** CLIs installed here (from `troupe doctor`'s checks). */
  detected: Adapter[];
  /** `--agents`: handles, or `handle:adapter`; else one per detected CLI (or the existing roster). */
  agents?: string[];
  /** `--default-session`; else the existing default session, else `collab`. */
  session?: string;
  /** Launchers found here, in AMQ's order, `commands` last (default: `commands` only). */
  availableLaunchers?: LauncherName[];
  /** `--launcher-preference` (parsed); else the existing local preference, else the launchers found. */
  launcherPreference?: string[];
}

export type FileAction = 'create' | 'replace' | 'keep' | 'append';

export interface PlannedFile {
  /** Relative to the project directory. */
  path: string;
  action: FileAction;
  /** The exact bytes to write (for meta/config.json: without its creation time, set at apply). */
  content?: string;
}

export interface SetupPlan {
  schema: 1;
  project_dir: string;
  /** The mail root, relative to the project directory. */
  root: string;
  default_session: string;
  detected: Adapter[];
  /** Written to `.amq/launch.local.json`: the order `launch --launcher auto` tries. */
  launcher_preference: string[];
  available_launchers: LauncherName[];
  /** What the operator should know, e.g. launchers of the preference troupe skips. */
  notes: string[];
  roster: Array<{ handle: string; kind: 'agent'; adapter: Adapter } | { handle: string; kind: 'human' }>;
  /** meta/config.json's agents after setup (what was there, plus the roster). */
  config_agents: string[];
  files: PlannedFile[];
  /** Mailboxes to create (relative to the project directory); complete ones are left alone. */
  mailboxes: string[];
}

export const DEFAULT_SESSION = 'collab';
export const DEFAULT_ROOT = '.agent-mail';

/**
 * The plan is a pure function of the request and the disk: the same inputs give the same plan and
 * so the same digest, and anything that changed on disk since a preview changes the digest.
 */
export function planSetup(request: SetupRequest, state: SetupState): SetupPlan {
  const session = request.session ?? state.launch?.default_session ?? DEFAULT_SESSION;
  if (!isValidSession(session)) throw new UsageError(`invalid session '${session}': use [a-z0-9_-]+`);
  const agents = roster(request, state);
  if (agents.length === 0) {
    throw new UsageError(`no agent CLI found (${ADAPTERS.join(', ')}) and no --agents given`, {
      hint: 'install one (see `troupe doctor`), or name the roster: --agents claude,codex',
    });
  }
  const root = state.amqrc?.root ?? DEFAULT_ROOT;
  const amqrcText = state.amqrc?.text ?? `${goJson({ root })}\n`;
  const launch: LaunchConfig = {
    schema: 1,
    default_session: session,
    agents,
    layout: state.launch?.layout ?? { type: 'columns' },
  };
  const launchText = `${goJson(launch)}\n`;
  const available = request.availableLaunchers ?? ['commands'];
  const preference = request.launcherPreference ?? state.localLaunch?.launcher_preference ?? [...available];
  const localText = `${goJson({ schema: 1, launcher_preference: preference })}\n`;
  const handles = agents.map((a) => a.handle);
  const configAgents = [...new Set([...(state.configAgents ?? []), ...handles])].sort();
  const files: PlannedFile[] = [
    { path: '.amqrc', action: state.amqrc ? 'keep' : 'create', content: amqrcText },
    {
      path: LAUNCH_FILE,
      action: fileAction(state.launchText, launchText),
      content: launchText,
    },
    {
      path: LAUNCH_LOCAL_FILE,
      action: fileAction(state.localLaunchText, localText),
      content: localText,
    },
    {
      path: `${root}/meta/config.json`,
      action:
        state.configAgents === undefined
          ? 'create'
          : state.configAgents.join(',') === configAgents.join(',')
            ? 'keep'
            : 'replace',
      content: `${goJson({ version: 1, agents: configAgents })}\n`,
    },
  ];
  // the mail and this machine's preferences stay out of commits
  const ignored = [...(root.startsWith('/') ? [] : [`${root}/`]), LAUNCH_LOCAL_FILE];
  const unignored = ignored.filter((line) => !state.gitignoreLines.includes(line));
  if (state.inGit && unignored.length > 0) {
    files.push({ path: '.gitignore', action: 'append', content: `${unignored.join('\n')}\n` });
  }
  const complete = new Set(state.completeMailboxes);
  const mailboxes = [root, `${root}/${session}`]
    .flatMap((r) => [...handles, HUMAN].map((h) => `${r}/agents/${h}`))
    .filter((m) => !complete.has(m));
  return {
    schema: 1,
    project_dir: state.projectDir,
    root,
    default_session: session,
    detected: [...request.detected].sort(),
    launcher_preference: preference,
    available_launchers: [...available],
    notes: preference
      .filter((name) => !(available as string[]).includes(name))
      .map((name) => `launcher '${name}' is not available here: launch --launcher auto passes it over`),
    roster: [
      ...agents.map((a) => ({ handle: a.handle, kind: 'agent' as const, adapter: a.adapter })),
      { handle: HUMAN, kind: 'human' as const },
    ],
    config_agents: configAgents,
    files,
    mailboxes,
  };
}

function fileAction(current: string | undefined, planned: string): FileAction {
  return current === undefined ? 'create' : current === planned ? 'keep' : 'replace';
}

function roster(request: SetupRequest, state: SetupState): LaunchAgent[] {
  if (!request.agents && state.launch) return state.launch.agents;
  const specs = request.agents ?? request.detected;
  const seen = new Set<string>();
  return specs.map((spec) => {
    const [rawHandle = '', rawAdapter] = spec.split(':');
    const handle = parseHandle(rawHandle, '--agents handle');
    const adapter = rawAdapter ?? handle;
    if (handle === HUMAN)
      throw new UsageError(`'${HUMAN}' is the person's handle: it is always on the roster`);
    if (!isAdapter(adapter)) {
      throw new UsageError(`--agents: '${spec}' names no agent CLI`, {
        hint: `use ${spellList(ADAPTERS)}, or handle:cli (e.g. reviewer:codex)`,
      });
    }
    if (seen.has(handle)) throw new UsageError(`--agents: '${handle}' appears twice`);
    seen.add(handle);
    const previous = state.launch?.agents.find((a) => a.handle === handle && a.adapter === adapter);
    return previous ?? { handle, adapter, command: [RUNTIMES[adapter].bin], resume_policy: 'resume' };
  });
}

/** `sha256:<hex>` of the plan's canonical JSON (keys sorted), as AMQ's setup digests are written. */
export function planDigest(plan: SetupPlan): string {
  return canonicalDigest(plan);
}

/** `sha256:<hex>` of a value's canonical JSON (keys sorted): the trust digest of setup and launch plans. */
export function canonicalDigest(value: unknown): string {
  return `sha256:${createHash('sha256')
    .update(JSON.stringify(sortMaps(value)))
    .digest('hex')}`;
}
