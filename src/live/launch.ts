import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { loadAmqrc } from '../bus/amqrc.js';
import { rfc3339 } from '../bus/clock.js';
import { mailbox } from '../bus/layout.js';
import { DEFAULT_DIR } from '../bus/root.js';
import { lockState, readWakeLock } from '../bus/wake-lock.js';
import { NotFoundError, UsageError } from '../core/errors.js';
import { agentLaunch } from './agent-command.js';
import { emulator } from './emulators.js';
import { type Adapter, LAUNCH_FILE, type LaunchAgent, readLaunchConfig } from './launch-config.js';
import { LAUNCHERS, type LauncherName, pickLauncher, readLocalLaunchConfig } from './launcher-preference.js';
import {
  type AgentRecord,
  knownConversation,
  readSessionRecord,
  type SessionRecord,
  writeSessionRecord,
} from './session-record.js';
import { projectDirOf } from './setup-files.js';
import { standingInstruction } from './standing-instruction.js';
import type { Tmux } from './tmux.js';

export type Launcher = 'auto' | LauncherName;

export interface LaunchOptions {
  cwd: string;
  session?: string;
  launcher: Launcher;
  tmux: Tmux;
  /** How the agents run troupe (for their instruction, and the pasted commands). */
  troupe: string;
  env: NodeJS.ProcessEnv;
  /** Only this agent (a handle, or an adapter one agent has): the others are left as they are. */
  only?: string;
  /** Starts the agent's wake once its pane is up. */
  startWake: (input: { root: string; me: string; pane: string }) => void;
}

export type Disposition = 'started' | 'resumed' | 'running' | 'disabled' | 'printed';

export interface LaunchedAgent {
  handle: string;
  adapter: Adapter;
  disposition: Disposition;
  conversation_id: string | null;
  argv: string[];
  pane?: string;
  /** For the commands launcher: the line to paste into a terminal. */
  command?: string;
  /** For cmux (its workspace) and ghostty (its terminal id): where the agent runs. */
  surface?: string;
}

export interface LaunchResult {
  session: string;
  root: string;
  launcher: LauncherName;
  tmux_session?: string;
  attach?: string;
  agents: LaunchedAgent[];
}

/** Where a project's session lives, from its `.amqrc` (else `<project>/.agent-mail`). */
export function projectSession(cwd: string, session?: string) {
  const projectDir = projectDirOf(cwd);
  const config = readLaunchConfig(projectDir);
  if (!config) {
    throw new NotFoundError(`no ${LAUNCH_FILE} in ${projectDir}`, { hint: 'run `troupe bus setup` first' });
  }
  const rc = join(projectDir, '.amqrc');
  const baseRoot = existsSync(rc) ? loadAmqrc(rc).root : join(projectDir, DEFAULT_DIR);
  const name = session ?? config.default_session;
  return { projectDir, config, baseRoot, session: name, root: join(baseRoot, name) };
}

/**
 * `troupe launch`: every agent of the roster in its CLI, with the bus environment and troupe's
 * standing instruction, in tmux panes (a wake each) or as commands to paste. A relaunch resumes
 * each agent's recorded conversation; an agent whose pane is still alive is left running.
 */
export function launch(options: LaunchOptions): LaunchResult {
  const { projectDir, config, baseRoot, session, root } = projectSession(options.cwd, options.session);
  if (!isDir(join(root, 'agents'))) {
    throw new NotFoundError(`no session '${session}' in ${baseRoot}`, {
      hint: `create it with \`troupe session create ${session}\``,
    });
  }
  const { tmux } = options;
  const launcher = resolveLauncher(projectDir, options.launcher, tmux, options.env);
  const record = readSessionRecord(root, session);
  const serverPid = launcher === 'tmux' ? tmux.serverPid() : undefined;
  const handles = config.agents.filter((a) => a.resume_policy !== 'disabled').map((a) => a.handle);
  const env = (me: string): Record<string, string> => ({
    AM_ROOT: root,
    AM_BASE_ROOT: baseRoot,
    AM_SESSION: session,
    AM_ME: me,
    ...(options.env.PATH ? { PATH: options.env.PATH } : {}),
  });

  const plans = roster(config.agents, options.only).map((agent) => {
    const prev = record.agents[agent.handle];
    if (agent.resume_policy === 'disabled') return { agent, disposition: 'disabled' as const };
    if (
      launcher === 'tmux' &&
      prev?.pane &&
      serverPid &&
      prev.tmux_server_pid === serverPid &&
      tmux.paneAlive(prev.pane, serverPid)
    ) {
      return { agent, disposition: 'running' as const, prev };
    }
    const nonce = randomBytes(6).toString('hex');
    const instruction = standingInstruction({
      me: agent.handle,
      session,
      others: handles.filter((h) => h !== agent.handle),
      troupe: options.troupe,
      nonce,
    });
    const previousId =
      agent.resume_policy === 'resume' && prev?.adapter === agent.adapter
        ? knownConversation(prev, options.env)
        : null;
    const run = agentLaunch(agent.adapter, agent.command, instruction, previousId);
    return {
      agent,
      disposition: run.resumed ? ('resumed' as const) : ('started' as const),
      run,
      nonce,
      prev,
    };
  });

  const now = rfc3339();
  const next: SessionRecord = { schema: 1, session, agents: { ...record.agents } };
  for (const p of plans) {
    if (!('run' in p) || !p.run) continue;
    next.agents[p.agent.handle] = {
      adapter: p.agent.adapter,
      conversation_id: p.run.conversationId,
      nonce: p.nonce,
      launched: now,
      launches: (p.prev?.launches ?? 0) + 1,
    };
  }
  // ids troupe chose are recorded before any CLI starts: a crash now still resumes them later
  writeSessionRecord(root, next);

  const agents: LaunchedAgent[] = [];
  const result: LaunchResult = { session, root, launcher, agents };
  const direction = config.layout.type === 'rows' ? 'rows' : 'columns';
  if (launcher !== 'tmux') {
    // the line to paste; cmux and ghostty type it into a terminal of their own for each agent
    const term = launcher === 'commands' ? undefined : emulator(launcher, options.env);
    let beside: string | undefined;
    for (const p of plans) {
      if (!('run' in p) || !p.run) {
        agents.push(summary(p.agent, p.disposition, p.prev?.conversation_id ?? null, []));
        continue;
      }
      const exports = Object.entries(env(p.agent.handle))
        .filter(([k]) => k !== 'PATH')
        .map(([k, v]) => `${k}=${shellQuote(v)}`)
        .join(' ');
      const line = `cd ${shellQuote(projectDir)} && export ${exports} && ${options.troupe} wake --me ${p.agent.handle} --detach && ${p.run.argv.map(shellQuote).join(' ')}`;
      if (!term) {
        agents.push({ ...summary(p.agent, 'printed', p.run.conversationId, p.run.argv), command: line });
        continue;
      }
      const title = `troupe ${basename(projectDir)} ${session}`;
      const surface = term.open({ title, cwd: projectDir, line, direction, ...(beside ? { beside } : {}) });
      beside ??= surface;
      agents.push({ ...summary(p.agent, p.disposition, p.run.conversationId, p.run.argv), surface });
    }
    return result;
  }

  const inside = Boolean(options.env.TMUX) && !tmux.socket;
  const tmuxSession = inside ? undefined : `troupe-${slug(basename(projectDir))}-${session}`;
  let first: string | undefined;
  for (const p of plans) {
    if (!('run' in p) || !p.run) {
      agents.push({
        ...summary(p.agent, p.disposition, p.prev?.conversation_id ?? null, []),
        ...(p.prev?.pane ? { pane: p.prev.pane } : {}),
      });
      continue;
    }
    const e = env(p.agent.handle);
    const pane = first
      ? tmux.splitPane(first, direction, projectDir, e, p.run.argv)
      : tmuxSession && !tmux.hasSession(tmuxSession)
        ? tmux.newSession(tmuxSession, `agents-${session}`, projectDir, e, p.run.argv)
        : tmux.newWindow(tmuxSession, `agents-${session}`, projectDir, e, p.run.argv);
    first ??= pane;
    agents.push({ ...summary(p.agent, p.disposition, p.run.conversationId, p.run.argv), pane });
  }
  if (first) tmux.evenLayout(first, direction);
  const pid = tmux.serverPid();
  for (const a of agents) {
    const entry = next.agents[a.handle];
    if (!a.pane || !entry || (a.disposition !== 'started' && a.disposition !== 'resumed')) continue;
    next.agents[a.handle] = {
      ...entry,
      pane: a.pane,
      ...(pid ? { tmux_server_pid: pid } : {}),
      ...(tmux.socket ? { tmux_socket: tmux.socket } : {}),
    } satisfies AgentRecord;
  }
  writeSessionRecord(root, next);
  for (const a of agents) {
    if (!a.pane || a.disposition === 'disabled') continue;
    // an agent left running keeps its wake, unless that wake died (then it gets a new one)
    if (a.disposition === 'running' && wakeRunning(root, a.handle)) continue;
    options.startWake({ root, me: a.handle, pane: a.pane });
  }
  if (tmuxSession) {
    result.tmux_session = tmuxSession;
    result.attach = `tmux${tmux.socket ? ` -L ${tmux.socket}` : ''} attach -t ${tmuxSession}`;
  }
  return result;
}

/** Whether a launcher works here: commands always; tmux installed; cmux and ghostty answering their ping. */
export function launcherAvailable(launcher: LauncherName, tmux: Tmux, env: NodeJS.ProcessEnv): boolean {
  if (launcher === 'commands') return true;
  return launcher === 'tmux' ? tmux.available() : emulator(launcher, env).available();
}

/** The launcher a launch uses: the one named, or for auto the first of this machine's preference that is here. */
export function resolveLauncher(
  projectDir: string,
  launcher: Launcher,
  tmux: Tmux,
  env: NodeJS.ProcessEnv = process.env,
): LauncherName {
  const available = (l: LauncherName) => launcherAvailable(l, tmux, env);
  // auto: the first launcher of this machine's preference (setup's .amq/launch.local.json) that is
  // here; as AMQ, the emulator troupe runs inside comes first
  const local = readLocalLaunchConfig(projectDir)?.launcher_preference ?? LAUNCHERS;
  const inside: LauncherName[] = env.CMUX_SURFACE_ID
    ? ['cmux']
    : env.TERM_PROGRAM === 'ghostty'
      ? ['ghostty']
      : [];
  const preference = [...new Set([...inside, ...local])];
  const picked = launcher === 'auto' ? pickLauncher(preference, available) : launcher;
  if (picked !== 'commands' && launcher !== 'auto' && !available(picked)) {
    throw new UsageError(`${picked} is not available here`, {
      hint: 'install or start it, or pass --launcher commands',
    });
  }
  return picked;
}

/** The agents a launch plans: all, or the one `only` names (by handle, else by a unique adapter). */
function roster(agents: LaunchAgent[], only: string | undefined): LaunchAgent[] {
  if (only === undefined) return agents;
  const byHandle = agents.filter((a) => a.handle === only);
  const picked = byHandle.length ? byHandle : agents.filter((a) => a.adapter === only);
  if (picked.length === 1) return picked;
  const names = agents.map((a) => a.handle).join(', ');
  if (picked.length > 1)
    throw new UsageError(
      `more than one agent runs ${only}: name one of ${picked.map((a) => a.handle).join(', ')}`,
    );
  throw new NotFoundError(`no agent '${only}' in ${LAUNCH_FILE} (agents: ${names})`);
}

function wakeRunning(root: string, handle: string): boolean {
  const lock = readWakeLock(mailbox(root, handle));
  return lock !== undefined && lockState(lock) === 'running';
}

function summary(
  agent: LaunchAgent,
  disposition: Disposition,
  id: string | null,
  argv: string[],
): LaunchedAgent {
  return { handle: agent.handle, adapter: agent.adapter, disposition, conversation_id: id, argv };
}

export function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function slug(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]+/g, '-').slice(0, 40) || 'project';
}

export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}
