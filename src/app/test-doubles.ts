import type { EventStore } from '../core/event-store.js';
import type { TaskEvent, TaskEventType } from '../core/events.js';
import type { WorkspaceSettings } from '../core/pipeline.js';
import { RuntimeError } from '../core/runtime.js';
import type { TaskMail } from '../core/task-mail.js';
import type { StageCommit, TaskWorkspace } from '../core/task-workspace.js';
import type { TaskState } from '../engine/fold/task-state.js';
import type { TaskAdapters, TaskProjection, TroupeMcp } from '../engine/ports.js';
import { TaskService } from '../engine/task-service.js';
import { defaultConfig, type ProjectConfig } from '../pipeline/config.js';
import { runCommandGate } from '../runtimes/command-gate.js';
import { scriptedRuntime } from '../runtimes/scripted.js';
import { openMemoryStore } from '../store/memory-store.js';

/**
 * The in-memory world a TaskService can run tasks in, for tests of the engine with no SQLite, git
 * or disk: the memory store, the scripted runtime, and a workspace, mail and task files that only
 * remember what they were asked. The counterpart of app/task-adapters.ts; kept out of the build.
 */

/** A workspace that keeps worktrees, commits and merges as names: every call is answered and remembered. */
export class MemoryWorkspace implements TaskWorkspace {
  /** What was asked of it, in order: `commit <agent> <path>`, `merge <branches> into <path>`, … */
  readonly calls: string[] = [];
  private commits = 0;

  /** `repo`: the repository every directory is in (null: none, as outside git). */
  constructor(private readonly repo: string | null = null) {}

  async repoOf(): Promise<string | null> {
    return this.repo;
  }

  async prepare(taskId: string, cwd: string, _settings: WorkspaceSettings) {
    this.calls.push(`prepare ${taskId}`);
    return {
      path: `${cwd}/.troupe/worktrees/${taskId}`,
      branch: `troupe/${taskId}`,
      base: 'main',
      repo: cwd,
    };
  }

  async commit(path: string, info: { task: string; stage: number; agent: string }): Promise<StageCommit> {
    this.calls.push(`commit ${info.agent} ${path}`);
    return { sha: `sha-${++this.commits}`, parent: `sha-${this.commits - 1}` };
  }

  /** Branches are names here: nothing to move. */
  async advance(): Promise<void> {}

  async align(path: string, _taskId: string, expected: string | null): Promise<void> {
    this.calls.push(`align ${path} at ${expected}`);
  }

  async tidy(_repo: string, taskId: string): Promise<string[]> {
    this.calls.push(`tidy ${taskId}`);
    return [`troupe/${taskId}`];
  }

  /** Files a test says a commit changed (`changed.set(sha, files)`); none otherwise. */
  readonly changed = new Map<string, string[]>();

  async showFiles(_path: string, rev: string, files: string[]): Promise<Record<string, string | null>> {
    return Object.fromEntries(files.map((f) => [f, `${f} at ${rev}`]));
  }

  async changedFiles(_path: string, _from: string, to: string): Promise<string[]> {
    return this.changed.get(to) ?? [];
  }

  async verifyAt<T>(repo: string, _taskId: string, sha: string, fn: (cwd: string) => Promise<T>): Promise<T> {
    this.calls.push(`verify ${sha}`);
    return fn(`${repo}/.troupe/verify/${sha}`);
  }

  /** Nothing is checked out here: nothing to make ahead. */
  keepCheckoutsReady(): void {}

  /** verifyAt keeps nothing here. */
  async releaseCheckouts(): Promise<void> {}

  async merge(_repo: string, taskId: string) {
    this.calls.push(`merge troupe/${taskId} into main`);
    return { merged: 'fast-forward', sha: `sha-${this.commits}` };
  }

  /** How long a branch's worktree takes to be ready, by agent (ms; none: at once). */
  readonly branchDelayMs: Record<string, number> = {};

  async prepareBranch(repo: string, taskId: string, agent: string) {
    this.calls.push(`branch ${agent}`);
    const delay = this.branchDelayMs[agent];
    if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
    const branch = `troupe/${taskId}--${agent}`;
    return { path: `${repo}/.troupe/worktrees/${taskId}--${agent}`, branch, start: `sha-${this.commits}` };
  }

  async mergeBranches(path: string, branches: string[]) {
    this.calls.push(`merge ${branches.join(' ')} into ${path}`);
    const from = `sha-${this.commits}`;
    return { merged: true as const, head: `sha-${++this.commits}`, from };
  }
}

/** Mail that stays in memory: what people were asked, what agents sent, and inboxes to fill. */
export class MemoryMail implements TaskMail {
  readonly asked: Array<Parameters<TaskMail['askPerson']>[0]> = [];
  readonly sent: Array<Parameters<TaskMail['send']>[0]> = [];
  /** Unread mail per agent, as its prompt would read it. */
  readonly inboxes = new Map<string, string>();
  /** The person's replies per agent, taken oldest first. */
  readonly replies = new Map<string, string[]>();

  askPerson(input: Parameters<TaskMail['askPerson']>[0]): void {
    this.asked.push(input);
  }

  drainInbox(agent: string): string {
    const unread = this.inboxes.get(agent) ?? '';
    this.inboxes.delete(agent);
    return unread;
  }

  send(input: Parameters<TaskMail['send']>[0]): void {
    this.sent.push(input);
  }

  takeReplies(_taskId: string, agent: string): string[] {
    const replies = this.replies.get(agent) ?? [];
    this.replies.delete(agent);
    return replies;
  }

  /** A mailbox agent's replies, unread until marked: keyed `agent<from`, ids `agent<from#n`. */
  peekReplies(_taskId: string, agent: string, from: string): Array<{ id: string; body: string }> {
    const key = `${agent}<${from}`;
    return (this.replies.get(key) ?? []).map((body, i) => ({ id: `${key}#${i}`, body }));
  }

  markRead(_agent: string, ids: string[]): void {
    for (const id of ids) this.replies.delete(id.slice(0, id.lastIndexOf('#')));
  }

  /** The asks a person has seen answered: the task and agent of each `markAsksRead`. */
  readonly asksRead: Array<{ taskId: string; agent: string }> = [];

  markAsksRead(taskId: string, agent: string): void {
    this.asksRead.push({ taskId, agent });
  }
}

/** A task's files, kept as the last state they were written from. */
export class MemoryFiles implements TaskProjection {
  syncs = 0;
  last: TaskState | null = null;

  sync(state: TaskState): void {
    this.syncs++;
    this.last = state;
  }

  async flushed(): Promise<void> {}
}

export interface MemoryWorld {
  service: TaskService;
  store: EventStore;
  workspace: MemoryWorkspace;
  mail: MemoryMail;
  files: Map<string, MemoryFiles>;
  decisions: Array<Record<string, unknown>>;
}

/**
 * A TaskService on the memory store and the in-memory adapters. Tasks must be started with a
 * script: there is no other runtime here. `store` wraps another one (one that counts appends).
 */
export function memoryWorld(
  options: { store?: EventStore; repo?: string | null; config?: ProjectConfig; troupeMcp?: TroupeMcp } = {},
): MemoryWorld {
  const store = options.store ?? openMemoryStore();
  const workspace = new MemoryWorkspace(options.repo ?? null);
  const mail = new MemoryMail();
  const files = new Map<string, MemoryFiles>();
  const decisions: Array<Record<string, unknown>> = [];
  const adapters: TaskAdapters = {
    runtime(name, script) {
      if (!script)
        throw new RuntimeError('missing_cli', `no runtime ${name} in memory: start the task with a script`);
      return scriptedRuntime(script);
    },
    files(taskId) {
      const known = files.get(taskId) ?? new MemoryFiles();
      files.set(taskId, known);
      return known;
    },
    rawLogPath: (taskId, name) => `/memory/${taskId}/raw/${name}.jsonl`,
    mail: () => mail,
    workspace,
    decisionLog: (line) => decisions.push(line),
    commandGate: runCommandGate,
    ...(options.troupeMcp ? { troupeMcp: options.troupeMcp } : {}),
  };
  const service = new TaskService('/memory/project', store, options.config ?? defaultConfig(), adapters);
  return { service, store, workspace, mail, files, decisions };
}

/**
 * The store, watched: the types of the events of each append (one entry per transaction), and
 * those the executor's poller read back (`events` after a seq).
 */
export function watchedStore(store: EventStore): {
  store: EventStore;
  appends: TaskEventType[][];
  polled: TaskEventType[];
} {
  const appends: TaskEventType[][] = [];
  const polled: TaskEventType[] = [];
  const watched: EventStore = {
    ...store,
    append(taskId: string, events: TaskEvent[], ...rest) {
      appends.push(events.map((e) => e.type));
      return store.append(taskId, events, ...rest);
    },
    *events(taskId: string, afterSeq = 0) {
      for (const event of store.events(taskId, afterSeq)) {
        if (afterSeq > 0) polled.push(event.type);
        yield event;
      }
    },
  };
  return { store: watched, appends, polled };
}
