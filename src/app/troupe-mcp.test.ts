import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  decodeMcpCall,
  MCP_CALL_FILE_MAX_BYTES,
  mcpDirectiveLine,
  type TroupeMcpCall,
} from '../core/mcp-call.js';
import { packageRoot } from '../package-root.js';
import { openCallStore, projectTroupeMcp, recordedDirectives } from './troupe-mcp.js';

const call: TroupeMcpCall = {
  taskId: 'T-ABC123',
  agent: 'dev',
  stage: 3,
  attempt: 2,
  handoffTargets: ['qa'],
  canAsk: false,
  voteKeyword: null,
};

const sqlite = (root: string) => ({ kind: 'sqlite' as const, file: join(root, 'elsewhere.db') });

describe('projectTroupeMcp', () => {
  it('starts this troupe’s `mcp` with the call and the project’s store in its environment, recording to the call’s own file', () => {
    const root = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
    const store = { kind: 'postgres' as const, url: 'postgres://u@h/db', schema: 'x', leaseSeconds: 5 };
    const server = projectTroupeMcp(root, store).server(call);
    expect(server.command).toBe(process.execPath);
    expect(server.args).toEqual([join(packageRoot(), 'bin', 'troupe.js'), 'mcp']);
    expect(server.env).toMatchObject({
      TROUPE_MCP_ROOT: root,
      TROUPE_MCP_CALLS: join(root, '.troupe', 'tasks', 'T-ABC123', 'mcp', '3-2.jsonl'),
    });
    expect(decodeMcpCall(server.env!.TROUPE_MCP_CALL!)).toEqual(call);
    expect(JSON.parse(server.env!.TROUPE_MCP_STORE!)).toEqual(store);
  });

  it('reads what the call recorded, and a call run again starts with nothing', () => {
    const root = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
    const mcp = projectTroupeMcp(root, sqlite(root));
    const file = mcp.server(call).env!.TROUPE_MCP_CALLS!;
    expect(mcp.directives(call)).toEqual([]);
    writeFileSync(file, mcpDirectiveLine({ kind: 'handoff', to: ['qa'] }));
    expect(mcp.directives(call)).toEqual([{ kind: 'handoff', to: ['qa'] }]);
    mcp.server(call);
    expect(existsSync(file)).toBe(false);
    expect(mcp.directives(call)).toEqual([]);
  });
});

describe('recordedDirectives', () => {
  it('reads a call file no further than its cap, whatever wrote it', () => {
    const root = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
    const file = join(root, 'calls.jsonl');
    const line = mcpDirectiveLine({ kind: 'chunk_add', description: 'x'.repeat(1000) });
    writeFileSync(file, line.repeat(Math.ceil((MCP_CALL_FILE_MAX_BYTES * 2) / line.length)));
    expect(recordedDirectives(file)).toHaveLength(Math.floor(MCP_CALL_FILE_MAX_BYTES / line.length));
    expect(recordedDirectives(join(root, 'none.jsonl'))).toEqual([]);
  });
});

describe('openCallStore', () => {
  it('opens only a store that is there: a missing SQLite file is an error, and no file is made', () => {
    const root = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
    expect(() => openCallStore(JSON.stringify(sqlite(root)))).toThrow(
      `no troupe store at ${join(root, 'elsewhere.db')}`,
    );
    expect(readdirSync(root)).toEqual([]);
  });

  it('refuses a value that names no store', () => {
    expect(() => openCallStore('{"kind":"mysql"}')).toThrow('TROUPE_MCP_STORE does not name a store');
    expect(() => openCallStore('not json')).toThrow('TROUPE_MCP_STORE does not name a store');
  });
});
