import { join } from 'node:path';
import { projectMail } from '../bus/task-mail.js';
import type { MergeLock } from '../core/merge-lock.js';
import { taskProcessTag } from '../core/runtime.js';
import type { TaskAdapters } from '../engine/ports.js';
import type { ProjectConfig } from '../pipeline/config.js';
import { runCommandGate } from '../runtimes/command-gate.js';
import { runtimeFor } from '../runtimes/registry.js';
import { loadScript } from '../runtimes/script.js';
import { endTagged } from '../runtimes/supervisor.js';
import { fileDecisionLog } from '../store/decision-log.js';
import type { StoreLocation } from '../store/store-url.js';
import { TaskFiles } from '../store/task-files.js';
import { fileMergeLock } from '../workspace/merge-lock.js';
import { remoteWorkspace } from '../workspace/remote-workspace.js';
import { projectTroupeMcp } from './troupe-mcp.js';

/**
 * The real world a project's tasks run in: the CLIs and endpoints of runtimes/, git worktrees,
 * (pushed to a remote with `workspace: {remote}`), the project's message bus, `.troupe/tasks/<id>/` files and `.troupe/decisions.jsonl`.
 */
export function projectAdapters(
  root: string,
  config: ProjectConfig,
  // project.ts adds the shared store's advisory lock (store/advisory-merge-lock.ts)
  mergeLock: MergeLock = fileMergeLock(join(root, '.troupe', 'locks')),
  // where the tasks' events are, for troupe's MCP server to read the same store
  store: StoreLocation = { kind: 'sqlite', file: join(root, '.troupe', 'troupe.db') },
): TaskAdapters {
  const configScript = config.script ? loadScript(join(root, config.script)) : null;
  return {
    runtime: (name, script) =>
      runtimeFor(name, script, configScript, { trustWorkspace: config.trust_workspace }),
    files: (taskId) => TaskFiles.forTask(root, taskId),
    rawLogPath: (taskId, name) => join(root, '.troupe', 'tasks', taskId, 'raw', `${name}.jsonl`),
    mail: (_taskId, agents) => projectMail(root, agents),
    workspace: remoteWorkspace({ root, mergeLock }),
    decisionLog: fileDecisionLog(root),
    commandGate: runCommandGate,
    troupeMcp: projectTroupeMcp(root, store),
    endLeftovers: (taskId) => endTagged(taskProcessTag(taskId)),
    env: process.env,
  };
}
