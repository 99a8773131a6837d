import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  encodeMcpCall,
  parseMcpDirectives,
  TROUPE_MCP_ENV,
  TROUPE_MCP_SERVER,
  type TroupeMcpCall,
} from '../core/mcp-call.js';
import type { TroupeMcp } from '../engine/ports.js';
import { packageRoot } from '../package-root.js';

/**
 * troupe's own MCP server for a project's runtime calls: this very troupe (`node bin/troupe.js
 * mcp`) with the call's identity in its environment, recording tool calls in
 * `.troupe/tasks/<id>/mcp/<stage>-<attempt>.jsonl`.
 */
export function projectTroupeMcp(root: string): TroupeMcp {
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
        },
      };
    },
    directives(call) {
      const calls = file(call);
      return existsSync(calls) ? parseMcpDirectives(readFileSync(calls, 'utf8')) : [];
    },
  };
}
