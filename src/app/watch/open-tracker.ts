import { resolve } from 'node:path';
import { UsageError } from '../../core/errors.js';
import type { Tracker } from '../../core/tracker.js';
import { resolveSecret } from '../../pipeline/symphony/workflow.js';
import { BacklogTracker, openBacklog } from '../../trackers/backlog.js';
import { openGitHubTracker } from '../../trackers/github.js';
import { DEFAULT_ACTIVE_STATES, DEFAULT_TERMINAL_STATES, openLinearTracker } from '../../trackers/linear.js';
import type { WatchSetup } from './watch-config.js';

/** The tracker a watch polls, with its states resolved (the config's, else the tracker's own). */
export interface OpenedTracker {
  tracker: Tracker;
  activeStates: string[];
  terminalStates: string[];
  /** Where a completed task's issue goes; null: it stays where it is. */
  handoffState: string | null;
}

export async function openWatchTracker(
  root: string,
  setup: WatchSetup,
  env: NodeJS.ProcessEnv,
): Promise<OpenedTracker> {
  const { config } = setup;
  const choice = config.tracker;
  switch (choice.kind) {
    case 'github': {
      const tracker = await openGitHubTracker(
        {
          owner: choice.owner,
          repo: choice.repo,
          ...(choice.api_url ? { apiUrl: choice.api_url } : {}),
          ...(choice.labels ? { labels: choice.labels } : {}),
          ...(choice.milestone ? { milestone: choice.milestone } : {}),
          ...(choice.assignee ? { assignee: choice.assignee } : {}),
          ...(choice.claim_label ? { claimLabel: choice.claim_label } : {}),
          // a hand-off state other than GitHub's own two is a label
          ...(config.handoff_state && !/^(open|closed)$/i.test(config.handoff_state)
            ? { handoffLabel: config.handoff_state }
            : {}),
        },
        { env },
      );
      return {
        tracker,
        activeStates: config.active_states ?? ['open'],
        terminalStates: config.terminal_states ?? ['closed'],
        handoffState: config.handoff_state ?? 'closed',
      };
    }
    case 'linear': {
      const key = resolveSecret(setup.workflow?.workflow.settings.tracker.api_key ?? null, env);
      const activeStates = config.active_states ?? DEFAULT_ACTIVE_STATES;
      const terminalStates = config.terminal_states ?? DEFAULT_TERMINAL_STATES;
      const tracker = openLinearTracker(
        {
          projectSlug: choice.project_slug,
          ...(choice.endpoint ? { endpoint: choice.endpoint } : {}),
          ...(choice.assignee ? { assignee: choice.assignee } : {}),
          activeStates,
          terminalStates,
        },
        { env: key ? { ...env, LINEAR_API_KEY: key } : env },
      );
      return { tracker, activeStates, terminalStates, handoffState: config.handoff_state };
    }
    case 'backlog': {
      const options = {
        ...(config.active_states ? { active: config.active_states } : {}),
        ...(config.terminal_states ? { terminal: config.terminal_states } : {}),
        ...(config.handoff_state ? { handOff: config.handoff_state } : {}),
        ...(choice.labels ? { labels: choice.labels } : {}),
        ...(choice.include_assigned ? { includeAssigned: true } : {}),
      };
      const tracker = choice.path
        ? new BacklogTracker(resolve(root, choice.path), options)
        : openBacklog(root, options);
      if (!tracker)
        throw new UsageError('tracker: kind backlog, but the project has no backlog/ folder with tasks/');
      const statuses = await tracker.statuses();
      return {
        tracker,
        activeStates: statuses.active,
        terminalStates: statuses.terminal,
        handoffState: statuses.handOff,
      };
    }
  }
}
