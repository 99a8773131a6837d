import { resolve } from 'node:path';
import { UsageError } from '../../core/errors.js';
import type { Pipeline } from '../../core/pipeline.js';
import type { ProjectConfig } from '../../pipeline/config.js';
import { loadWorkflow } from '../../pipeline/symphony/validate.js';
import type { Workflow } from '../../pipeline/symphony/workflow.js';
import { pullRequestSetting, WATCH_DEFAULTS, type WatchConfig } from '../../pipeline/tracker-config.js';
import { findBacklog } from '../../trackers/backlog.js';

/**
 * What `troupe watch` watches, and by which rules: `--workflow WORKFLOW.md` (Symphony's front
 * matter on the same settings, its prompt and one-agent pipeline), else `tracker:` in
 * .troupe/config.yaml, else a `backlog/` folder at the project root with every default.
 */
export interface WatchSetup {
  config: WatchConfig;
  /** From WORKFLOW.md: the task's input is its prompt rendered for the issue, run by its pipeline. */
  workflow: { workflow: Workflow; pipeline: Pipeline } | null;
  /** Where the settings came from, for messages. */
  from: string;
}

export function resolveWatchSetup(root: string, config: ProjectConfig, workflowFile?: string): WatchSetup {
  if (workflowFile) {
    const file = resolve(root, workflowFile);
    const loaded = loadWorkflow(file);
    return { config: fromWorkflow(loaded.workflow), workflow: loaded, from: file };
  }
  if (config.tracker) return { config: config.tracker, workflow: null, from: '.troupe/config.yaml' };
  if (findBacklog(root)) {
    return { config: withDefaults({ kind: 'backlog' }), workflow: null, from: 'the backlog/ folder' };
  }
  throw new UsageError('no tracker to watch', {
    hint: 'add tracker: {kind: github|linear|backlog, …} to .troupe/config.yaml, give --workflow WORKFLOW.md, or make a backlog/ folder (Backlog.md)',
  });
}

function withDefaults(tracker: WatchConfig['tracker']): WatchConfig {
  return {
    tracker,
    active_states: null,
    terminal_states: null,
    handoff_state: null,
    pipelines: {},
    default_pipeline: null,
    polling: { interval_ms: WATCH_DEFAULTS.interval_ms },
    concurrency: { max: WATCH_DEFAULTS.max_concurrent, per_state: {} },
    max_retries: WATCH_DEFAULTS.max_retries,
    retry_backoff_ms: WATCH_DEFAULTS.retry_backoff_ms,
    max_retry_backoff_ms: WATCH_DEFAULTS.max_retry_backoff_ms,
    stall_timeout_ms: WATCH_DEFAULTS.stall_timeout_ms,
    pull_request: pullRequestSetting(tracker.kind),
  };
}

/** Symphony's settings on troupe's: Linear is the one tracker kind both have. */
function fromWorkflow(workflow: Workflow): WatchConfig {
  const s = workflow.settings;
  if (s.tracker.kind !== 'linear') {
    throw new UsageError(
      `${workflow.file}: tracker.kind ${s.tracker.kind ?? '(none)'} is not one troupe watch reads`,
      {
        hint: 'troupe watch reads tracker.kind: linear from a WORKFLOW.md; for GitHub or a backlog use tracker: in .troupe/config.yaml',
      },
    );
  }
  return {
    ...withDefaults({
      kind: 'linear',
      project_slug: s.tracker.project_slug ?? '',
      ...(s.tracker.endpoint ? { endpoint: s.tracker.endpoint } : {}),
      ...(s.tracker.assignee?.trim() ? { assignee: s.tracker.assignee.trim() } : {}),
    }),
    active_states: s.tracker.active_states,
    terminal_states: s.tracker.terminal_states,
    polling: { interval_ms: s.polling.interval_ms },
    concurrency: { max: s.agent.max_concurrent_agents, per_state: s.agent.max_concurrent_agents_by_state },
    max_retry_backoff_ms: s.agent.max_retry_backoff_ms,
    stall_timeout_ms: s.codex.stall_timeout_ms,
  };
}
