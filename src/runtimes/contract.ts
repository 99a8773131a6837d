import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  type Runtime,
  RuntimeError,
  type RuntimeErrorKind,
  type RuntimeEvent,
  type RuntimeRequest,
} from '../core/runtime.js';
import type { CliRuntime } from '../core/runtimes.js';
import type { Usage } from '../core/usage.js';

/**
 * What every runtime must do, run once per implementation (as hono's routers share one suite):
 * stream text and end with exactly one result carrying usage, report failures as a RuntimeError
 * of the right kind (with the reset time where there is one), stop at once when cancelled or
 * out of time leaving no process behind, and keep the raw stream when asked.
 */

export interface ContractFixtures {
  /** The scenario of a plain successful run, and what it must produce. */
  success: { scenario: string; text: string; sessionId?: string; usage?: Partial<Usage> };
  /** Scenarios that must fail, each with its kind (and reset time, when the scenario has one). */
  failures: Array<{ scenario: string; kind: RuntimeErrorKind; resetAt?: Date }>;
  /** A scenario that never ends; `pids` when it writes "<pid> <grandchild>" to FAKE_CLI_PIDFILE. */
  hang?: { scenario: string; pids?: boolean };
  /** The runtime enforces `timeoutMs` itself (the scripted runtime leaves it to the executor). */
  ownTimeout?: boolean;
  /** The runtime writes `rawLogPath`. */
  rawLog?: boolean;
  /** A scenario whose reply is `{argv, stdin}` as JSON: the prompt must be passed exactly once. */
  argv?: string;
  /** Fields every request of this runtime needs (a model for openai, a command for command). */
  request?: Partial<RuntimeRequest>;
}

/** The fake CLIs of test/fixtures/fake-clis, which replay the captured output of the real ones. */
export function fakeCli(name: CliRuntime): string {
  return fileURLToPath(new URL(`../../test/fixtures/fake-clis/${name}`, import.meta.url));
}

/** The stdout lines a real CLI printed in a captured scenario (test/fixtures/cli-captures). */
export function capturedLines(cli: CliRuntime, scenario: string): string[] {
  const file = new URL(`../../test/fixtures/cli-captures/${cli}/${scenario}.stdout`, import.meta.url);
  return readFileSync(fileURLToPath(file), 'utf8').trimEnd().split('\n');
}

/** `make(scenario, env)`: the runtime set up to play `scenario`, with extra environment for it. */
export type MakeRuntime = (scenario: string, env?: Record<string, string>) => Runtime;

export function baseRequest(overrides: Partial<RuntimeRequest> = {}): RuntimeRequest {
  return {
    agentId: 'dev',
    purpose: 'stage',
    prompt: 'say hi',
    systemPrompt: '',
    model: null,
    effort: null,
    cwd: process.cwd(),
    mcp: [],
    extraFlags: [],
    timeoutMs: 20_000,
    signal: new AbortController().signal,
    resumeSessionId: null,
    previousMeta: [],
    ...overrides,
  };
}

export async function collect(runtime: Runtime, request: RuntimeRequest): Promise<RuntimeEvent[]> {
  const events: RuntimeEvent[] = [];
  for await (const event of runtime.run(request)) events.push(event);
  return events;
}

export async function failureOf(runtime: Runtime, request: RuntimeRequest): Promise<RuntimeError> {
  try {
    await collect(runtime, request);
  } catch (error) {
    if (error instanceof RuntimeError) return error;
    throw new Error(`expected a RuntimeError, got ${String(error)}`);
  }
  throw new Error('expected the run to fail, but it ended with a result');
}

const RETRYABLE: ReadonlySet<RuntimeErrorKind> = new Set([
  'rate_limited',
  'network',
  'overloaded',
  'timeout',
]);

export function runtimeContract(name: string, make: MakeRuntime, fixtures: ContractFixtures): void {
  const request = (overrides: Partial<RuntimeRequest> = {}) =>
    baseRequest({ ...fixtures.request, ...overrides });

  describe(`${name} runtime contract`, () => {
    it('streams text and ends with exactly one result carrying usage', async () => {
      const events = await collect(make(fixtures.success.scenario), request());
      const results = events.filter((e) => e.type === 'result');
      expect(results).toHaveLength(1);
      const result = events.at(-1);
      if (result?.type !== 'result') throw new Error('the last event is not the result');
      expect(result.text).toContain(fixtures.success.text);
      const streamed = events.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('');
      expect(streamed).toContain(fixtures.success.text);
      for (const value of Object.values(result.usage)) expect(value).toBeGreaterThanOrEqual(0);
      if (fixtures.success.usage) expect(result.usage).toMatchObject(fixtures.success.usage);
    });

    if (fixtures.success.sessionId) {
      it('reports the session id before the result, and in its meta', async () => {
        const events = await collect(make(fixtures.success.scenario), request());
        const session = events.findIndex((e) => e.type === 'session');
        expect(session).toBeGreaterThanOrEqual(0);
        expect(events[session]).toEqual({ type: 'session', id: fixtures.success.sessionId });
        expect(session).toBeLessThan(events.length - 1);
        const result = events.at(-1);
        expect(result?.type === 'result' && result.meta?.session_id).toBe(fixtures.success.sessionId);
      });
    }

    for (const failure of fixtures.failures) {
      it(`classifies ${failure.scenario} as ${failure.kind}`, async () => {
        const error = await failureOf(make(failure.scenario), request());
        expect({ kind: error.kind, message: error.message }).toMatchObject({ kind: failure.kind });
        expect(error.message.length).toBeGreaterThan(0);
        expect(error.retryable).toBe(RETRYABLE.has(failure.kind));
        if (failure.resetAt) expect(error.resetAt?.toISOString()).toBe(failure.resetAt.toISOString());
      });
    }

    it('rejects as cancelled, without output, when cancelled before it starts', async () => {
      const controller = new AbortController();
      controller.abort(new RuntimeError('cancelled', 'task cancelled'));
      const error = await failureOf(make(fixtures.success.scenario), request({ signal: controller.signal }));
      expect(error.kind).toBe('cancelled');
    });

    const hang = fixtures.hang;
    if (hang) {
      it('stops at once when cancelled, and leaves no process behind', async () => {
        const dir = mkdtempSync(path.join(os.tmpdir(), 'troupe-contract-'));
        const pidFile = path.join(dir, 'pids');
        const controller = new AbortController();
        const runtime = make(hang.scenario, { FAKE_CLI_PIDFILE: pidFile });
        const run = failureOf(runtime, request({ signal: controller.signal }));
        if (hang.pids)
          await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').includes(' '));
        else await new Promise((r) => setTimeout(r, 100));
        // the scenario never ends by itself: that the run returns at all is the cancel's doing
        controller.abort(new RuntimeError('cancelled', 'task cancelled'));
        const error = await run;
        expect(error.kind).toBe('cancelled');
        if (hang.pids) {
          const pids = readFileSync(pidFile, 'utf8').trim().split(' ').map(Number);
          await waitFor(() => pids.every((pid) => !alive(pid)));
          expect(pids.filter(alive)).toEqual([]);
        }
      });

      if (fixtures.ownTimeout !== false) {
        it('ends as timeout when its own timeoutMs passes', async () => {
          const error = await failureOf(make(hang.scenario), request({ timeoutMs: 300 }));
          expect(error.kind).toBe('timeout');
          expect(error.retryable).toBe(true);
        });
      }
    }

    if (fixtures.rawLog) {
      it('appends the raw stream to rawLogPath', async () => {
        const dir = mkdtempSync(path.join(os.tmpdir(), 'troupe-contract-'));
        const rawLogPath = path.join(dir, 'raw', '1.jsonl');
        await collect(make(fixtures.success.scenario), request({ rawLogPath }));
        const raw = readFileSync(rawLogPath, 'utf8');
        expect(raw).toContain(fixtures.success.text);
        expect(raw.endsWith('\n')).toBe(true);
      });
    }

    if (fixtures.argv) {
      it('passes the prompt exactly once', async () => {
        const prompt = 'PROMPT-7f3a: -say hi, starting with a dash';
        const events = await collect(
          make(fixtures.argv!),
          request({ prompt, systemPrompt: 'SYSTEM-PROMPT-b41c' }),
        );
        const result = events.at(-1);
        if (result?.type !== 'result') throw new Error('no result');
        const seen = JSON.stringify(JSON.parse(result.text));
        expect(seen.split('PROMPT-7f3a').length - 1).toBe(1);
        // a stage's instructions are its prompt: the raw system prompt is not sent a second time
        expect(seen).not.toContain('SYSTEM-PROMPT-b41c');
      });
    }
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // a zombie is dead already; reaping it is its new parent's job
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

async function waitFor(condition: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}
