/** A local one-to-one thread: both handles sorted, so either side derives the same id. */
export function p2pThread(a: string, b: string): string {
  return a < b ? `p2p/${a}__${b}` : `p2p/${b}__${a}`;
}

export interface Endpoint {
  project?: string;
  session?: string;
  handle: string;
}

/**
 * Cross-session and cross-project threads name each side fully, sender first (not sorted):
 * `p2p/<proj>:<session>:<me>__<proj>:<session>:<to>`, leaving out what a side does not have.
 */
export function routedThread(from: Endpoint, to: Endpoint): string {
  const side = (e: Endpoint) => [e.project, e.session, e.handle].filter(Boolean).join(':');
  return `p2p/${side(from)}__${side(to)}`;
}
