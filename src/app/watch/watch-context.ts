import type { Pipeline } from '../../core/pipeline.js';
import type { Script } from '../../core/script.js';
import { resolvePipeline } from '../../pipeline/discover.js';
import { loadPipeline } from '../../pipeline/load.js';
import type { IssuePolicy } from '../../scheduler/issue-queue.js';
import type { Project } from '../project.js';
import { openWatchTracker } from './open-tracker.js';
import { resolveWatchSetup } from './watch-config.js';
import { trackerFailures, type WatchContext } from './watch-poll.js';
import { WorkflowHooks } from './workflow-hooks.js';

export interface WatchContextOptions {
  /** `--workflow WORKFLOW.md`; none: `tracker:` in config, else `backlog/`. */
  workflow?: string;
  /** `--script`: every agent on the scripted runtime (offline). */
  script?: Script | null;
  /** One line for a person (stderr, serve's log). */
  warn: (line: string) => void;
  env?: NodeJS.ProcessEnv;
}

/**
 * What a watcher works with, the same for `troupe watch`, `serve --watch` and `worker --watch`:
 * the tracker opened and its rules resolved (a usage error when there is none to watch).
 */
export async function openWatchContext(
  project: Pick<Project, 'root' | 'config' | 'store' | 'tasks'>,
  options: WatchContextOptions,
): Promise<WatchContext> {
  const setup = resolveWatchSetup(project.root, project.config, options.workflow);
  const opened = await openWatchTracker(project.root, setup, options.env ?? process.env);
  const workflowPipeline = setup.workflow?.pipeline ?? null;
  return {
    tasks: project.tasks,
    store: project.store,
    opened,
    setup,
    policy: {
      ...policyOf(project, setup.config, opened, workflowPipeline),
      requiredLabels: setup.workflow?.workflow.settings.tracker.required_labels ?? [],
    },
    pipeline: pipelineLoader(project),
    hooks: setup.workflow
      ? new WorkflowHooks(setup.workflow.workflow.settings.hooks, {
          root: project.root,
          env: options.env ?? process.env,
          log: options.warn,
        })
      : null,
    script: options.script ?? null,
    by: 'troupe',
    now: () => new Date(),
    warn: options.warn,
    failed: trackerFailures(options.warn),
  };
}

function policyOf(
  project: Pick<Project, 'root' | 'config'>,
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
function defaultPipeline(project: Pick<Project, 'root' | 'config'>, name: string | null): string | null {
  if (name) return name;
  try {
    return resolvePipeline(project.root, {}, project.config).name;
  } catch {
    return null;
  }
}

/** A project pipeline by name, as `troupe run --pipeline <name>` loads it, each loaded once. */
function pipelineLoader(project: Pick<Project, 'root' | 'config'>): (name: string) => Pipeline {
  const loaded = new Map<string, Pipeline>();
  return (name) => {
    let pipeline = loaded.get(name);
    if (!pipeline) {
      const found = resolvePipeline(project.root, { pipeline: name }, project.config);
      pipeline = loadPipeline(found.file, { params: {}, name: found.name });
      loaded.set(name, pipeline);
    }
    return pipeline;
  };
}

/** What a watcher watches and how often, for its start-up line. */
export function describeWatch(ctx: WatchContext): string {
  return `${ctx.opened.tracker.source} every ${ctx.setup.config.polling.interval_ms / 1000} s (from ${ctx.setup.from})`;
}
