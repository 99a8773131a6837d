import { closeSync, mkdirSync, openSync, readSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { UsageError } from '../core/errors.js';
import type { EventStore } from '../core/event-store.js';
import {
  encodeMcpCall,
  MCP_CALL_FILE_MAX_BYTES,
  type McpDirective,
  parseMcpDirectives,
  TROUPE_MCP_ENV,
  TROUPE_MCP_SERVER,
  type TroupeMcpCall,
} from '../core/mcp-call.js';
import type { TroupeMcp } from '../engine/ports.js';
import { packageRoot } from '../package-root.js';
import { openStore } from '../store/open-store.js';
import type { StoreLocation } from '../store/store-url.js';

/**
 * troupe's own MCP server for a project's runtime calls: this very troupe (`node bin/troupe.js
 * mcp`) with the call's identity and the project's store in its environment, recording tool
 * calls in `.troupe/tasks/<id>/mcp/<stage>-<attempt>.jsonl`.
 */
export function projectTroupeMcp(root: string, store: StoreLocation): TroupeMcp {
  const file = (call: TroupeMcpCall) =>
    join(root, '.troupe', 'tasks', call.taskId, 'mcp', `${call.stage}-${call.attempt}.jsonl`);
  return {
    server(call) {
      const calls = file(call);
      // a call run again (after a limit, a crash) starts with nothing recorded
      rmSync(calls, { force: true });
      mkdirSync(join(calls, '..'), { recursive: true });
      return {
        server: TROUPE_MCP_SERVER,
        command: process.execPath,
        args: [join(packageRoot(), 'bin', 'troupe.js'), 'mcp'],
        env: {
          [TROUPE_MCP_ENV.root]: root,
          [TROUPE_MCP_ENV.calls]: calls,
          [TROUPE_MCP_ENV.call]: encodeMcpCall(call),
          [TROUPE_MCP_ENV.store]: JSON.stringify(store),
        },
      };
    },
    directives(call) {
      return recordedDirectives(file(call));
    },
  };
}

/**
 * The directives a call's file holds, read up to its cap whatever wrote it (the agent can reach
 * the file too): a longer file's cut-off last line is passed over like a torn one.
 */
export function recordedDirectives(calls: string): McpDirective[] {
  let fd: number;
  try {
    fd = openSync(calls, 'r');
  } catch {
    return [];
  }
  try {
    const buffer = Buffer.alloc(MCP_CALL_FILE_MAX_BYTES);
    let length = 0;
    for (let n = 1; n > 0 && length < buffer.length; length += n)
      n = readSync(fd, buffer, length, buffer.length - length, null);
    return parseMcpDirectives(buffer.subarray(0, length).toString('utf8'));
  } finally {
    closeSync(fd);
  }
}

// a lease's length is left out: the server takes no lease
const Location = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('sqlite'), file: z.string().min(1) }),
  z.object({ kind: z.literal('postgres'), url: z.string().min(1), schema: z.string().nullable() }),
]);

/**
 * The store a call's server reads: the very one the executor that started it writes (its
 * `TROUPE_MCP_STORE`), opened only if it is there — the server never creates or migrates one.
 */
export function openCallStore(value: string): EventStore {
  const location = parseJson(value, Location);
  if (!location) throw new UsageError(`${TROUPE_MCP_ENV.store} does not name a store`);
  return openStore(location, { existing: true });
}

function parseJson<T>(text: string, schema: z.ZodType<T>): T | null {
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
