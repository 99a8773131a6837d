import { hostname, userInfo } from 'node:os';
import { UsageError } from '../core/errors.js';
import type { Decider } from '../core/events.js';
import { agentAbove } from '../runtimes/supervisor.js';

/**
 * The person at this terminal, for the record of a gate's decision; refused when this troupe
 * runs inside one of troupe's agents (an agent does not decide its own gate: docs/security.md).
 */
export function personAtTerminal(): Decider {
  const agent = agentAbove();
  if (agent) {
    throw new UsageError(`an agent cannot decide a gate: this command runs inside agent ${agent}`, {
      hint: 'a person decides, from their own terminal, the API or the dashboard',
    });
  }
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // no passwd entry (a container's uid): the host still says where
  }
  return { channel: 'cli', who: `${user}@${hostname()}` };
}
