import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../core/runtime.js';
import { baseRequest, collect, fakeCli, runtimeContract } from './contract.js';
import { GeminiStreamParser, geminiArgs, geminiRuntime, geminiSettings } from './gemini.js';
import { userGeminiHome } from './gemini-home.js';

const NOW = new Date('2026-11-29T10:02:30Z');
const settingsDir = mkdtempSync(path.join(os.tmpdir(), 'troupe-gemini-settings-'));
// the user's own gemini home (never the real one of whoever runs the tests)
const userHome = mkdtempSync(path.join(os.tmpdir(), 'troupe-gemini-user-'));
const make = (scenario: string, env: Record<string, string> = {}, trustWorkspace = true) =>
  geminiRuntime({
    bin: fakeCli('gemini'),
    env: { FAKE_CLI_SCENARIO: scenario, GEMINI_CLI_HOME: userHome, ...env },
    now: () => NOW,
    settingsDir,
    trustWorkspace,
  });

runtimeContract('gemini', make, {
  success: {
    scenario: 'success',
    text: 'hi from mock',
    sessionId: '65321f49-1348-4a67-8f1f-e198f3f84d79',
    usage: { input_tokens: 221, output_tokens: 9, cache_read_tokens: 100 },
  },
  failures: [
    { scenario: 'not-logged-in', kind: 'auth' },
    { scenario: 'not-logged-in-json', kind: 'auth' },
    { scenario: 'untrusted-dir', kind: 'untrusted_directory' },
    { scenario: 'daily-quota', kind: 'usage_limit' },
    { scenario: 'daily-quota-text', kind: 'usage_limit' },
    { scenario: 'capacity-exhausted', kind: 'overloaded' },
    { scenario: 'capacity-exhausted-json', kind: 'overloaded' },
    { scenario: 'auth-invalid-key', kind: 'auth' },
    { scenario: 'auth-invalid-key-json', kind: 'auth' },
    { scenario: 'per-minute-429', kind: 'rate_limited', resetAt: new Date(NOW.getTime() + 1000) },
    { scenario: 'no-network', kind: 'network' },
    { scenario: 'resume-not-found', kind: 'session_not_found' },
    { scenario: 'resume-invalid-id', kind: 'session_not_found' },
  ],
  hang: { scenario: 'hang', pids: true },
  rawLog: true,
  argv: 'argv',
});

describe('gemini runtime', () => {
  it('runs headless with stream-json, the approval mode of its permissions and --skip-trust', () => {
    expect(
      geminiArgs(baseRequest({ permissions: 'edit', resumeSessionId: 's1' }), { trust: true, model: 'm' }),
    ).toEqual([
      '-o',
      'stream-json',
      '-m',
      'm',
      '--approval-mode',
      'auto_edit',
      '--skip-trust',
      '--resume',
      's1',
      '--prompt=say hi',
    ]);
    expect(geminiArgs(baseRequest(), { trust: false, model: null })).toEqual([
      '-o',
      'stream-json',
      '--approval-mode',
      'default',
      '--prompt=say hi',
    ]);
  });

  it('says how to fix an untrusted folder when trust_workspace is off', async () => {
    const error = await make('untrusted-dir', {}, false)
      .run(baseRequest())
      [Symbol.asyncIterator]()
      .next()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'untrusted_directory' });
    expect((error as Error & { hint: string }).hint).toContain('trust_workspace');
  });

  it("passes MCP servers (trusted, and only those) and effort in the user's settings of a home of the run's own, and a gate its system prompt", async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'troupe-gemini-home-'));
    mkdirSync(path.join(home, '.gemini'));
    writeFileSync(
      path.join(home, '.gemini', 'settings.json'),
      '{\n  // the user signs in with a key\n  "security": {"auth": {"selectedType": "gemini-api-key"}},\n  "mcpServers": {"mine": {"command": "my-server"}}\n}\n',
    );
    writeFileSync(path.join(home, '.gemini', 'oauth_creds.json'), '{}');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'troupe-gemini-'));
    const argvFile = path.join(dir, 'argv.jsonl');
    await collect(
      make('success', { FAKE_CLI_ARGV_FILE: argvFile, GEMINI_CLI_HOME: home }),
      baseRequest({
        purpose: 'gate',
        systemPrompt: 'You are a quality gate.',
        model: 'gemini-3.1-pro-preview',
        effort: 'low',
        mcp: [{ server: 'fs', command: null, args: ['/srv'], env: null }],
      }),
    );
    const seen = JSON.parse(readFileSync(argvFile, 'utf8'));
    const alias = 'troupe-low-gemini-3.1-pro-preview';
    expect(seen.argv.slice(2, 4)).toEqual(['-m', alias]);
    expect(seen.argv).toContain('--allowed-mcp-server-names');
    expect(seen.argv[seen.argv.indexOf('--allowed-mcp-server-names') + 1]).toBe('fs');
    expect(seen.env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH).toBeUndefined();
    expect(seen.env.GEMINI_CLI_HOME).not.toBe(home);
    expect(JSON.parse(seen.files.geminiSettings)).toEqual({
      security: { auth: { selectedType: 'gemini-api-key' } },
      // the user's own server `mine` is left out: Gemini would start it in the task
      mcpServers: {
        fs: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-fs', '/srv'], env: {}, trust: true },
      },
      modelConfigs: {
        customAliases: {
          [alias]: {
            extends: 'chat-base-3',
            modelConfig: {
              model: 'gemini-3.1-pro-preview',
              generateContentConfig: { thinkingConfig: { thinkingLevel: 'LOW' } },
            },
          },
        },
      },
    });
    // credentials, sessions and history are the user's own, through links
    expect(seen.files.geminiLinks).toEqual({
      'oauth_creds.json': path.join(home, '.gemini', 'oauth_creds.json'),
      tmp: path.join(home, '.gemini', 'tmp'),
      history: path.join(home, '.gemini', 'history'),
    });
    expect(existsSync(seen.env.GEMINI_CLI_HOME)).toBe(false);
    expect(seen.files.GEMINI_SYSTEM_MD).toBe('You are a quality gate.');
  });

  it("keeps the user's own MCP servers out of a task that has none (a home of the run's own)", async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'troupe-gemini-home-'));
    mkdirSync(path.join(home, '.gemini'));
    writeFileSync(
      path.join(home, '.gemini', 'settings.json'),
      JSON.stringify({ ui: { theme: 'x' }, mcpServers: { mine: { command: 'my-server' } } }),
    );
    const argvFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'troupe-gemini-')), 'argv.jsonl');
    await collect(make('success', { FAKE_CLI_ARGV_FILE: argvFile, GEMINI_CLI_HOME: home }), baseRequest());
    const seen = JSON.parse(readFileSync(argvFile, 'utf8'));
    expect(seen.env.GEMINI_CLI_HOME).not.toBe(home);
    expect(JSON.parse(seen.files.geminiSettings)).toEqual({ ui: { theme: 'x' }, mcpServers: {} });
  });

  it('writes a remote MCP server as httpUrl (streamable HTTP) or url (SSE), with its headers, trusted', () => {
    const remote = (server: string, url: string, transport: 'http' | 'sse') => ({
      server,
      command: null,
      args: [],
      env: null,
      url,
      headers: { 'X-Key': 'k' },
      transport,
    });
    const settings = geminiSettings(
      baseRequest({
        mcp: [
          remote('docs', 'https://mcp.example.com/mcp', 'http'),
          remote('old', 'https://old.example.com/sse', 'sse'),
        ],
      }),
    );
    expect(settings?.file.mcpServers).toEqual({
      docs: { httpUrl: 'https://mcp.example.com/mcp', headers: { 'X-Key': 'k' }, trust: true },
      old: { url: 'https://old.example.com/sse', headers: { 'X-Key': 'k' }, trust: true },
    });
  });

  it("takes the user's gemini home from the HOME it gives the CLI, under GEMINI_CLI_HOME", () => {
    expect(userGeminiHome({ HOME: '/h' })).toBe('/h');
    expect(userGeminiHome({ HOME: '/h', GEMINI_CLI_HOME: '/g' })).toBe('/g');
  });

  it("names the user's own settings file in a message, not the run's copy", () => {
    // what the real 0.61.0 printed, without auth, run with troupe's home for the run
    const stderr =
      'Please set an Auth method in your /root/.cache/troupe/gemini-dMLWOF/home/.gemini/settings.json or specify one of the following environment variables before running: GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA\n';
    const parser = new GeminiStreamParser(() => NOW, {
      run: '/root/.cache/troupe/gemini-dMLWOF/home',
      user: '/home/me',
    });
    const error = parser.finish({ exitCode: 41, signal: null, stderr });
    expect(error).toMatchObject({
      kind: 'auth',
      message: expect.stringMatching(
        /^Please set an Auth method in your \/home\/me\/\.gemini\/settings\.json or/,
      ),
    });
  });

  it('a failure keeps its session only once the model answered in it (one that failed at once cannot resume)', () => {
    const init = '{"type":"init","session_id":"17d05b93-9dbf-4355-a52c-aad119e779be","model":"auto"}';
    const limited = new GeminiStreamParser(() => NOW);
    limited.line(init);
    expect(limited.meta()).toEqual({});
    const answered = new GeminiStreamParser(() => NOW);
    answered.line(init);
    answered.line('{"type":"tool_use","tool_name":"write_file","tool_id":"w1","parameters":{}}');
    expect(answered.meta()).toEqual({ session_id: '17d05b93-9dbf-4355-a52c-aad119e779be' });
  });

  it('shows a settings file gemini skipped as a warning, before the failure it explains', async () => {
    const events: RuntimeEvent[] = [];
    const error = await (async () => {
      for await (const event of make('settings-skipped').run(baseRequest())) events.push(event);
    })().catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'crashed' });
    expect((error as Error).message).toContain('models/troupe-high-gemini-2.5-flash is not found');
    expect(events.filter((e) => e.type === 'notice')).toEqual([
      {
        type: 'notice',
        level: 'warning',
        message: expect.stringMatching(
          /^Security Warning: Skipping system defaults file '.*settings\.json': .*is not owned by root/,
        ),
      },
    ]);
  });

  it('streams tool use and its result', async () => {
    const events = await collect(make('tool-use'), baseRequest());
    expect(events.filter((e) => e.type === 'tool_start' || e.type === 'tool_result')).toEqual([
      {
        type: 'tool_start',
        id: 'read_file__read_file_1795946574911_0',
        name: 'read_file',
        input: { file_path: '/home/user/project/hello.txt' },
      },
      { type: 'tool_result', id: 'read_file__read_file_1795946574911_0', output: '' },
    ]);
  });
});
