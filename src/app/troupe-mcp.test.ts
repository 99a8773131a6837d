import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeMcpCall, mcpDirectiveLine, type TroupeMcpCall } from '../core/mcp-call.js';
import { packageRoot } from '../package-root.js';
import { projectTroupeMcp } from './troupe-mcp.js';

const call: TroupeMcpCall = {
  taskId: 'T-ABC123',
  agent: 'dev',
  stage: 3,
  attempt: 2,
  handoffTargets: ['qa'],
  canAsk: false,
  voteKeyword: null,
};

describe('projectTroupeMcp', () => {
  it('starts this troupe’s `mcp` with the call in its environment, recording to the call’s own file', () => {
    const root = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
    const server = projectTroupeMcp(root).server(call);
    expect(server.command).toBe(process.execPath);
    expect(server.args).toEqual([join(packageRoot(), 'bin', 'troupe.js'), 'mcp']);
    expect(server.env).toMatchObject({
      TROUPE_MCP_ROOT: root,
      TROUPE_MCP_CALLS: join(root, '.troupe', 'tasks', 'T-ABC123', 'mcp', '3-2.jsonl'),
    });
    expect(decodeMcpCall(server.env!.TROUPE_MCP_CALL!)).toEqual(call);
  });

  it('reads what the call recorded, and a call run again starts with nothing', () => {
    const root = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
    const mcp = projectTroupeMcp(root);
    const file = mcp.server(call).env!.TROUPE_MCP_CALLS!;
    expect(mcp.directives(call)).toEqual([]);
    writeFileSync(file, mcpDirectiveLine({ kind: 'handoff', to: ['qa'] }));
    expect(mcp.directives(call)).toEqual([{ kind: 'handoff', to: ['qa'] }]);
    mcp.server(call);
    expect(existsSync(file)).toBe(false);
    expect(mcp.directives(call)).toEqual([]);
  });
});
