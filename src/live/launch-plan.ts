import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { writeFileAtomic } from '../bus/durable.js';
import { ActionRequiredError } from '../bus/errors.js';
import { goJson } from '../bus/go-json.js';
import { messageOf, NotFoundError, UsageError } from '../core/errors.js';
import {
  isDir,
  type LaunchedAgent,
  type Launcher,
  type LaunchOptions,
  type LaunchResult,
  launch,
  projectSession,
  resolveLauncher,
} from './launch.js';
import { type Adapter, type ResumePolicy, readJsonFile } from './launch-config.js';
import type { LauncherName } from './launcher-preference.js';
import { canonicalDigest } from './setup-plan.js';

/**
 * What `launch --plan` shows and `--prepare` writes: who would be launched, how, in which
 * session. Its digest covers exactly this, so a roster, command, session or launcher change
 * after the preparation is refused at apply. Conversation ids are not in it: each launch
 * records new ones, and a continued apply must still match.
 */
export interface LaunchPlan {
  schema: 1;
  project_dir: string;
  session: string;
  root: string;
  launcher: LauncherName;
  layout: string;
  agents: Array<{
    handle: string;
    adapter: Adapter;
    command: string[];
    resume_policy: ResumePolicy;
    action: 'launch' | 'skip';
  }>;
}

export interface PreparedLaunch {
  digest: string;
  plan: LaunchPlan;
}

export type JournalState = 'pending' | 'launching' | 'launched';

/** The recovery journal: each agent's step of one prepared plan, written before and after it. */
export interface LaunchJournal {
  schema: 1;
  digest: string;
  agents: Record<string, JournalState>;
}

export interface ApplyResult {
  digest: string;
  session: string;
  root: string;
  launcher: LauncherName;
  /** Agents this apply launched (or printed), in plan order. */
  applied: LaunchedAgent[];
  /** Agents an earlier apply of the same plan had already launched (from the journal). */
  already: string[];
  journal: string;
  attach?: string;
}

export function preparedPath(root: string): string {
  return join(root, 'extensions', 'troupe', 'launch-prepared.json');
}

export function journalPath(root: string): string {
  return join(root, 'extensions', 'troupe', 'launch-journal.json');
}

type PlanOptions = Pick<LaunchOptions, 'cwd' | 'session' | 'tmux'> & { launcher: Launcher };

/** The plan of a launch, read from disk only: nothing is written, nothing started. */
export function planLaunch(options: PlanOptions): PreparedLaunch {
  const { projectDir, config, baseRoot, session, root } = projectSession(options.cwd, options.session);
  if (!isDir(join(root, 'agents'))) {
    throw new NotFoundError(`no session '${session}' in ${baseRoot}`, {
      hint: `create it with \`troupe session create ${session}\``,
    });
  }
  const plan: LaunchPlan = {
    schema: 1,
    project_dir: projectDir,
    session,
    root,
    launcher: resolveLauncher(projectDir, options.launcher, options.tmux),
    layout: config.layout.type,
    agents: config.agents.map((a) => ({
      handle: a.handle,
      adapter: a.adapter,
      command: a.command,
      resume_policy: a.resume_policy,
      action: a.resume_policy === 'disabled' ? 'skip' : 'launch',
    })),
  };
  return { digest: canonicalDigest(plan), plan };
}

/** `--prepare`: the plan and its digest, and a fresh journal with every agent pending. */
export function prepareLaunch(options: PlanOptions): PreparedLaunch & { prepared: string; journal: string } {
  const prepared = planLaunch(options);
  const file = preparedPath(prepared.plan.root);
  writeJson(file, prepared);
  const journal = writeJournal(prepared.plan.root, {
    schema: 1,
    digest: prepared.digest,
    agents: Object.fromEntries(
      prepared.plan.agents.filter((a) => a.action === 'launch').map((a) => [a.handle, 'pending' as const]),
    ),
  });
  return { ...prepared, prepared: file, journal };
}

/**
 * `--apply`: carries out a prepared plan if the plan of the disk now is still the one prepared
 * (else exit 6, nothing started). Agent by agent, the journal says `launching` before and
 * `launched` after (back to `pending` when the launcher refuses). An apply after a crash skips
 * what is `launched`; an agent left `launching` stops it with exit 6 until the operator says.
 */
export function applyLaunch(
  file: string | undefined,
  options: Omit<LaunchOptions, 'launcher' | 'session' | 'only'>,
): ApplyResult {
  const source = file ?? preparedPath(projectSession(options.cwd).root);
  const prepared = readPrepared(source);
  const { plan } = prepared;
  const now = planLaunch({
    cwd: options.cwd,
    session: plan.session,
    launcher: plan.launcher,
    tmux: options.tmux,
  });
  if (canonicalDigest(plan) !== prepared.digest || now.digest !== prepared.digest) {
    throw new ActionRequiredError(
      `the launch plan changed since it was prepared (now ${now.digest}); nothing was launched`,
      { hint: 'run `troupe launch --prepare` again, review it, and apply it' },
    );
  }
  const journalFile = journalPath(plan.root);
  const old = readJournal(journalFile);
  const journal: LaunchJournal =
    old?.digest === prepared.digest ? old : { schema: 1, digest: prepared.digest, agents: {} };
  const result: ApplyResult = {
    digest: prepared.digest,
    session: plan.session,
    root: plan.root,
    launcher: plan.launcher,
    applied: [],
    already: [],
    journal: journalFile,
  };
  // fail closed: an apply killed between `launching` and `launched` may have started that agent,
  // and a terminal app cannot tell; only printed commands are harmless to give twice
  const unknown = Object.entries(journal.agents)
    .filter(([, state]) => state === 'launching')
    .map(([handle]) => handle);
  if (unknown.length > 0 && plan.launcher !== 'commands') {
    throw new ActionRequiredError(
      `an earlier apply stopped while launching ${unknown.join(', ')}: it may be running; nothing was launched`,
      { hint: `check, then set it to "pending" (launch it) or "launched" (leave it) in ${journalFile}` },
    );
  }
  for (const agent of plan.agents) {
    if (agent.action !== 'launch') continue;
    if (journal.agents[agent.handle] === 'launched') {
      result.already.push(agent.handle);
      continue;
    }
    journal.agents[agent.handle] = 'launching';
    writeJournal(plan.root, journal);
    let launched: LaunchResult;
    try {
      launched = launch({ ...options, session: plan.session, launcher: plan.launcher, only: agent.handle });
    } catch (error) {
      // the launcher refused (an error, not a crash): nothing started, so it is still to do
      journal.agents[agent.handle] = 'pending';
      writeJournal(plan.root, journal);
      throw error;
    }
    result.applied.push(...launched.agents);
    if (launched.attach) result.attach = launched.attach;
    journal.agents[agent.handle] = 'launched';
    writeJournal(plan.root, journal);
  }
  return result;
}

/**
 * `cleanup --launch-journal`: the session's recovery journal, removed unless `dryRun`, so the next
 * apply starts afresh (the operator has checked what a `launching` agent left). The prepared plan
 * stays. Returns the journal's path and what it recorded, or undefined when there is none.
 */
export function clearLaunchJournal(
  root: string,
  dryRun = false,
): { path: string; agents: Record<string, string> } | undefined {
  const file = journalPath(root);
  if (!existsSync(file)) return undefined;
  let agents: Record<string, string> = {};
  try {
    agents = readJournal(file)?.agents ?? {};
  } catch {
    // a torn journal is still cleared: that is what this is for
  }
  if (!dryRun) rmSync(file, { force: true });
  return { path: file, agents };
}

function readPrepared(file: string): PreparedLaunch {
  let raw: unknown;
  try {
    raw = file === '-' ? JSON.parse(readFileSync(0, 'utf8')) : readJsonFile(file);
  } catch (error) {
    throw new UsageError(`${file}: ${messageOf(error)}`);
  }
  if (raw === undefined)
    throw new NotFoundError(`no prepared launch at ${file}`, { hint: 'run `troupe launch --prepare` first' });
  const p = raw as Partial<PreparedLaunch>;
  if (
    !p ||
    typeof p.digest !== 'string' ||
    !p.plan ||
    p.plan.schema !== 1 ||
    typeof p.plan.session !== 'string' ||
    typeof p.plan.launcher !== 'string' ||
    !Array.isArray(p.plan.agents)
  )
    throw new UsageError(`${file}: not a prepared launch (expected {"digest", "plan"} from --prepare)`);
  return p as PreparedLaunch;
}

function readJournal(file: string): LaunchJournal | undefined {
  const raw = readJsonFile(file) as Partial<LaunchJournal> | undefined;
  if (!raw || typeof raw.digest !== 'string' || !raw.agents || typeof raw.agents !== 'object')
    return undefined;
  return { schema: 1, digest: raw.digest, agents: raw.agents };
}

function writeJournal(root: string, journal: LaunchJournal): string {
  const file = journalPath(root);
  writeJson(file, journal);
  return file;
}

function writeJson(file: string, value: unknown): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileAtomic(dirname(file), basename(file), Buffer.from(`${goJson(value)}\n`));
}
