import { resolve } from 'node:path';
import type { Project } from '../../app/project.js';
import { openProject } from '../../app/project.js';
import { openWatchTracker } from '../../app/watch/open-tracker.js';
import { resolveWatchSetup } from '../../app/watch/watch-config.js';
import { watchLoop } from '../../app/watch/watch-loop.js';
import { type PollResult, pollOnce, trackerFailures, type WatchContext } from '../../app/watch/watch-poll.js';
import { WorkflowHooks } from '../../app/watch/workflow-hooks.js';
import { UsageError } from '../../core/errors.js';
import type { Pipeline } from '../../core/pipeline.js';
import { printable } from '../../core/printable.js';
import { resolvePipeline } from '../../pipeline/discover.js';
import { loadScript } from '../../runtimes/script.js';
import type { IssuePolicy } from '../../scheduler/issue-queue.js';
import type { CommandIo } from '../command-io.js';
import { Exit } from '../exit-codes.js';
import { loadProjectPipeline } from '../options.js';

export interface WatchOptions {
  once?: boolean;
  dryRun?: boolean;
  workflow?: string;
  script?: string;
  json?: boolean;
}

/** `troupe watch`: docs/trackers.md, "troupe watch". Exit 0 once stopped (SIGINT/SIGTERM) or after --once. */
export async function watch(options: WatchOptions, io: CommandIo): Promise<number> {
  if (options.dryRun && !options.once) throw new UsageError('--dry-run goes with --once');
  const project = openProject(io.cwd);
  const setup = resolveWatchSetup(project.root, project.config, options.workflow);
  const opened = await openWatchTracker(project.root, setup, process.env);
  const ctx: WatchContext = {
    tasks: project.tasks,
    store: project.store,
    opened,
    setup,
    policy: {
      ...policyOf(project, setup.config, opened, setup.workflow?.pipeline ?? null),
      requiredLabels: setup.workflow?.workflow.settings.tracker.required_labels ?? [],
    },
    pipeline: pipelineLoader(project),
    hooks: setup.workflow
      ? new WorkflowHooks(setup.workflow.workflow.settings.hooks, {
          root: project.root,
          env: process.env,
          log: (line) => io.err(`${line}\n`),
        })
      : null,
    script: options.script ? loadScript(resolve(io.cwd, options.script)) : null,
    by: 'troupe',
    now: () => new Date(),
    warn: (line) => io.err(`${line}\n`),
    failed: trackerFailures((line) => io.err(`${line}\n`)),
  };
  // the long-running loop tells what changed: an issue's reason is printed again only when it changes
  const told = options.once ? null : new Map<string, string>();
  const report = (result: PollResult) => printPoll(result, options.json === true, io, told);
  if (options.dryRun) {
    report(await pollOnce(ctx, { dryRun: true }));
    return Exit.ok;
  }
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    if (!options.once)
      io.err(
        `troupe watch: ${opened.tracker.source} every ${setup.config.polling.interval_ms / 1000} s (from ${setup.from})\n`,
      );
    await watchLoop(ctx, { once: options.once === true, signal: stop.signal, onPoll: report });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return Exit.ok;
}

function policyOf(
  project: Project,
  config: WatchContext['setup']['config'],
  opened: WatchContext['opened'],
  workflowPipeline: Pipeline | null,
): IssuePolicy {
  return {
    activeStates: opened.activeStates,
    terminalStates: opened.terminalStates,
    pipelines: workflowPipeline ? {} : config.pipelines,
    defaultPipeline: workflowPipeline
      ? workflowPipeline.name
      : defaultPipeline(project, config.default_pipeline),
    concurrency: { max: config.concurrency.max, perState: config.concurrency.per_state },
  };
}

/** The tracker's default pipeline, else the project's (as `troupe run` finds it); null: none. */
function defaultPipeline(project: Project, name: string | null): string | null {
  if (name) return name;
  try {
    return resolvePipeline(project.root, {}, project.config).name;
  } catch {
    return null;
  }
}

function pipelineLoader(project: Project): (name: string) => Pipeline {
  const loaded = new Map<string, Pipeline>();
  return (name) => {
    let pipeline = loaded.get(name);
    if (!pipeline) {
      pipeline = loadProjectPipeline(project, { pipeline: name });
      loaded.set(name, pipeline);
    }
    return pipeline;
  };
}

function printPoll(result: PollResult, json: boolean, io: CommandIo, told: Map<string, string> | null): void {
  const { started } = result;
  const selection = told
    ? {
        ...result.selection,
        skipped: result.selection.skipped.filter((s) => told.get(s.issue.id) !== s.reason),
      }
    : result.selection;
  for (const s of selection.skipped) told?.set(s.issue.id, s.reason);
  for (const s of started) told?.delete(s.issue.id);
  if (told && selection.start.length === 0 && selection.skipped.length === 0) return;
  const taskOf = (id: string) => started.find((s) => s.issue.id === id)?.taskId ?? null;
  if (json) {
    io.out(
      `${JSON.stringify({
        start: selection.start.map((s) => ({
          id: s.issue.id,
          identifier: s.issue.identifier,
          title: s.issue.title,
          pipeline: s.pipeline,
          retry: s.retryOf,
          task: taskOf(s.issue.id),
        })),
        skipped: selection.skipped.map((s) => ({
          id: s.issue.id,
          identifier: s.issue.identifier,
          reason: s.reason,
        })),
      })}\n`,
    );
    return;
  }
  // issue text is someone else's: nothing in it reaches the terminal as control characters
  for (const s of selection.start) {
    const task = taskOf(s.issue.id);
    io.out(
      `${task ? `started ${task}` : 'would start'}  ${printable(s.issue.identifier)}  ${s.pipeline}  ${printable(JSON.stringify(s.issue.title))}\n`,
    );
  }
  for (const s of selection.skipped)
    io.out(`skipped  ${printable(s.issue.identifier)}  ${printable(s.reason)}\n`);
}
