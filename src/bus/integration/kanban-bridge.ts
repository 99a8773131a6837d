import { setTimeout as sleep } from 'node:timers/promises';
import { messageOf } from '../../core/errors.js';
import { KanbanState } from './kanban.js';
import type { OrchestratorEvent } from './orchestrator.js';

/** Kanban's runtime stream, where AMQ's bridge listens by default. */
export const KANBAN_URL = 'ws://127.0.0.1:3484/api/runtime/ws';

export interface BridgeOptions {
  url: string;
  /** Only this workspace's task notifications (`--workspace-id`). */
  workspaceId?: string;
  reconnectMs: number;
  signal: AbortSignal;
  notify: (event: OrchestratorEvent) => void;
  log: (line: string) => void;
}

/**
 * `integration kanban bridge` (AMQ's, experimental): reads Kanban's runtime WebSocket and mails
 * each notification its frames make, reconnecting after `reconnectMs` when the stream drops (a
 * new connection starts from a new snapshot, with fresh state, as AMQ's does). Runs until aborted.
 * Needs a global WebSocket (Node 22, or Node 20 with --experimental-websocket).
 */
export async function runKanbanBridge(options: BridgeOptions): Promise<void> {
  while (!options.signal.aborted) {
    const error = await session(options);
    if (options.signal.aborted) return;
    options.log(`kanban bridge: ${error}; reconnecting in ${options.reconnectMs} ms`);
    await sleep(options.reconnectMs, undefined, { signal: options.signal }).catch(() => {});
  }
}

/** One connection, until it closes or fails: why it ended. */
function session(options: BridgeOptions): Promise<string> {
  const state = new KanbanState();
  return new Promise((resolve) => {
    let socket: WebSocket;
    try {
      socket = new WebSocket(options.url);
    } catch (error) {
      resolve(messageOf(error));
      return;
    }
    const abort = () => {
      socket.close();
      end('stopped');
    };
    options.signal.addEventListener('abort', abort, { once: true });
    let ended = false;
    const end = (why: string) => {
      if (ended) return;
      ended = true;
      options.signal.removeEventListener('abort', abort);
      resolve(why);
    };
    socket.addEventListener('message', (frame) => {
      if (typeof frame.data !== 'string') return;
      let message: unknown;
      try {
        message = JSON.parse(frame.data);
      } catch {
        options.log('kanban bridge: ignoring a frame that is not JSON');
        return;
      }
      for (const note of state.apply(message)) {
        if (options.workspaceId && note.workspace?.id !== options.workspaceId) continue;
        try {
          options.notify(note);
        } catch (error) {
          options.log(`kanban bridge: delivery error: ${messageOf(error)}`);
        }
      }
    });
    socket.addEventListener('error', () => end(`cannot read ${options.url}`));
    socket.addEventListener('close', (e) => end(`connection closed (${e.code})`));
  });
}
