import type { Command } from 'commander';
import { registerAgents } from './agents.js';
import { registerBus } from './bus.js';
import { registerCancel } from './cancel.js';
import { registerChunks } from './chunks.js';
import { registerContext } from './context.js';
import { registerDecide } from './decide.js';
import { registerDecisions } from './decisions.js';
import { registerDemo } from './demo.js';
import { registerDoctor } from './doctor.js';
import { registerInit } from './init.js';
import { registerList } from './list.js';
import { registerMerge } from './merge.js';
import { registerPipeline } from './pipeline.js';
import { registerPr } from './pr.js';
import { registerRestart } from './restart.js';
import { registerResume } from './resume.js';
import { registerRun } from './run.js';
import { registerSchema } from './schema.js';
import { registerServe } from './serve.js';
import { registerStatus } from './status.js';
import { registerTest } from './test.js';
import { registerUsage } from './usage.js';
import { registerValidate } from './validate.js';
import { registerWorktrees } from './worktrees.js';

/**
 * One file per command. Registration must stay cheap: a command imports its heavy modules
 * (YAML, SQLite, the engine) inside its action, so `troupe --version` starts fast.
 */
export function registerCommands(program: Command): void {
  registerInit(program);
  registerValidate(program);
  registerAgents(program);
  registerRun(program);
  registerTest(program);
  registerList(program);
  registerStatus(program);
  registerContext(program);
  registerDecide(program);
  registerCancel(program);
  registerChunks(program);
  registerResume(program);
  registerRestart(program);
  registerDemo(program);
  registerPipeline(program);
  registerSchema(program);
  registerDoctor(program);
  registerBus(program);
  registerServe(program);
  registerUsage(program);
  registerDecisions(program);
  registerWorktrees(program);
  registerMerge(program);
  registerPr(program);
}
