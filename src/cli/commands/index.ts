import type { Command } from 'commander';
import { registerAgents } from './agents.js';
import { registerAmq } from './amq.js';
import { registerBus } from './bus.js';
import { registerCancel } from './cancel.js';
import { registerChunks } from './chunks.js';
import { registerContext } from './context.js';
import { registerDb } from './db.js';
import { registerDecide } from './decide.js';
import { registerDecisions } from './decisions.js';
import { registerDemo } from './demo.js';
import { registerDoctor } from './doctor.js';
import { registerInit } from './init.js';
import { registerList } from './list.js';
import { registerLive } from './live.js';
import { registerMcp } from './mcp.js';
import { registerMerge } from './merge.js';
import { registerPipeline } from './pipeline.js';
import { registerPr } from './pr.js';
import { registerQueue } from './queue.js';
import { registerRegistry } from './registry.js';
import { registerRestart } from './restart.js';
import { registerResume } from './resume.js';
import { registerRun } from './run.js';
import { registerSchema } from './schema.js';
import { registerServe } from './serve.js';
import { registerStatus } from './status.js';
import { registerTest } from './test.js';
import { registerUpgrade } from './upgrade.js';
import { registerUsage } from './usage.js';
import { registerValidate } from './validate.js';
import { registerWatch } from './watch.js';
import { registerWorker, registerWorkers } from './worker.js';
import { registerWorktrees } from './worktrees.js';

/** Each file's register function, with the top-level commands it adds. */
export const COMMANDS: Array<[names: string[], register: (program: Command) => void]> = [
  [['init'], registerInit],
  [['validate'], registerValidate],
  [['agents'], registerAgents],
  [['run'], registerRun],
  [['test'], registerTest],
  [['list'], registerList],
  [['status'], registerStatus],
  [['context'], registerContext],
  [['approve', 'reject', 'human-input'], registerDecide],
  [['cancel'], registerCancel],
  [['chunks'], registerChunks],
  [['resume'], registerResume],
  [['restart', 'fix'], registerRestart],
  [['demo'], registerDemo],
  [['pipeline'], registerPipeline],
  [['schema'], registerSchema],
  [['doctor'], registerDoctor],
  [['bus'], registerBus],
  [['launch', 'session', 'wake'], registerLive],
  [['amq'], registerAmq],
  [['serve'], registerServe],
  [['usage'], registerUsage],
  [['decisions'], registerDecisions],
  [['worktrees'], registerWorktrees],
  [['merge'], registerMerge],
  [['pr'], registerPr],
  [['mcp'], registerMcp],
  [['search', 'pull', 'publish', 'registry'], registerRegistry],
  [['worker'], registerWorker],
  [['workers'], registerWorkers],
  [['queue'], registerQueue],
  [['db'], registerDb],
  [['watch'], registerWatch],
  [['upgrade'], registerUpgrade],
];

/**
 * One file per command. Registration must stay cheap: a command imports its heavy modules
 * (YAML, SQLite, the engine) inside its action, so `troupe --version` starts fast. When the
 * command line names a command, only that one is registered (registering all ~25 costs a few
 * ms of every run); otherwise (help, an unknown command and its suggestion) all of them are.
 */
export function registerCommands(program: Command, invoked?: string): void {
  const named = COMMANDS.find(([names]) => invoked !== undefined && names.includes(invoked));
  for (const [, register] of named ? [named] : COMMANDS) register(program);
}
