import { CLI_RUNTIMES, type CliRuntime, RUNTIMES, type RuntimeName } from '../core/runtimes.js';

/** What `troupe init` found of one CLI (from `troupe doctor`'s checks). */
export interface CliFound {
  runtime: CliRuntime;
  installed: boolean;
  /** It can run headless here (logged in, trusted folder). */
  ready: boolean;
}

export interface Team {
  /** Runs the agents that write (a template's `claude` seats). */
  writer: RuntimeName;
  /** Runs the agents that review (a template's `gemini` seats). */
  reviewer: RuntimeName;
  /** Why this team, in a few words. */
  reason: string;
}

/** Who writes best first; reviewing on another model than the writer catches what it misses. */
const WRITERS = ranked('writes');
const REVIEWERS = ranked('reviews');

function ranked(seat: 'writes' | 'reviews'): CliRuntime[] {
  return [...CLI_RUNTIMES].sort((a, b) => RUNTIMES[a].team[seat] - RUNTIMES[b].team[seat]);
}

/**
 * The team for this machine, pure: the CLIs asked for (first writes, second reviews), else the
 * ones that can run headless, else the installed ones, else the scripted runtime.
 */
export function proposeTeam(found: readonly CliFound[], asked: readonly RuntimeName[] = []): Team {
  if (asked.length > 0) {
    const [writer, reviewer = writer] = asked as [RuntimeName, RuntimeName?];
    return { writer, reviewer: reviewer!, reason: 'as asked (--runtimes)' };
  }
  const ready = found.filter((c) => c.ready).map((c) => c.runtime);
  const installed = found.filter((c) => c.installed).map((c) => c.runtime);
  const usable = ready.length > 0 ? ready : installed;
  const how = ready.length > 0 ? 'can run headless here' : 'installed, but not ready to run headless';
  const writer = WRITERS.find((r) => usable.includes(r));
  if (!writer) return { writer: 'scripted', reviewer: 'scripted', reason: 'no agent CLI found on PATH' };
  const reviewer = REVIEWERS.find((r) => r !== writer && usable.includes(r)) ?? writer;
  return {
    writer,
    reviewer,
    reason:
      reviewer === writer
        ? `only ${writer} ${how}: it writes and reviews, with different prompts`
        : `${usable.join(', ')} ${how}`,
  };
}
