import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import { describe, expect, it, vi } from 'vitest';
import {
  ActionRequiredError,
  AmqrcError,
  BusTimeoutError,
  CollisionError,
  ContextMismatchError,
  DlqRetryError,
  MessageInvalidError,
  PartialDeliveryError,
} from '../bus/errors.js';
import {
  AuthoringError,
  isTroupeError,
  LeaseLostError,
  NotFoundError,
  PipelineError,
  QueueError,
  ScriptError,
  StateError,
  StoreConfigError,
  StoreTooNewError,
  StoreUnavailableError,
  TaskBusyError,
  TooLargeError,
  type TroupeError,
  UsageError,
} from '../core/errors.js';
import { RuntimeError } from '../core/runtime.js';
import { TrackerError } from '../core/tracker.js';
import { BranchInUseError } from '../engine/execute/branch-workspaces.js';
import { RoutingUnavailableError } from '../engine/plan/stage-route.js';
import { ConditionError } from '../pipeline/lang/conditions.js';
import { TemplateError } from '../pipeline/lang/template.js';
import { RoutingConfigError } from '../pipeline/routing-config.js';
import { IntegrityError, RegistryError } from '../registry/errors.js';
import { ApiError, errorResponse, STATUS_BY_CODE } from '../server/errors.js';
import { GitError, MergeConflictError, NoCommitError } from '../workspace/errors.js';
import { ScriptedEffectError } from '../workspace/scripted-effects.js';
import { Exit, exitCodeFor } from './exit-codes.js';

/**
 * Every named error class in src/, one instance each, with the exit code and HTTP status a user
 * gets for it. The compiler checks that both tables map every code; this checks that each class
 * carries the code meant for it, and the values the README, docs/bus.md and docs/server.md promise.
 */
const NAMED: Record<string, [error: TroupeError, exit: number, status: number]> = {
  UsageError: [new UsageError('x'), 2, 400],
  NotFoundError: [new NotFoundError('x'), 3, 404],
  StateError: [new StateError('x'), 1, 409],
  TaskBusyError: [new TaskBusyError('x'), 1, 409],
  TooLargeError: [new TooLargeError('x'), 2, 413],
  StoreConfigError: [new StoreConfigError('x'), 2, 500],
  StoreUnavailableError: [new StoreUnavailableError('x'), 8, 503],
  StoreTooNewError: [new StoreTooNewError('x'), 9, 500],
  LeaseLostError: [new LeaseLostError('T-1', 'x'), 1, 409],
  QueueError: [new QueueError('x'), 1, 503],
  PipelineError: [new PipelineError('p.yaml', 1, 1, 'x'), 2, 422],
  ScriptError: [new ScriptError('x'), 2, 422],
  AuthoringError: [new AuthoringError('x'), 1, 502],
  TemplateError: [new TemplateError('prompt', 'x'), 2, 422],
  ConditionError: [new ConditionError('x'), 2, 422],
  RoutingConfigError: [new RoutingConfigError('x', ['tiers']), 2, 422],
  RoutingUnavailableError: [new RoutingUnavailableError('x'), 2, 422],
  RuntimeError: [new RuntimeError('crashed', 'x'), 1, 502],
  // AMQ's exit codes (docs/bus.md): 4 timeout, 5 context mismatch, 1 for any other bus error
  BusTimeoutError: [new BusTimeoutError('x'), 4, 504],
  ContextMismatchError: [new ContextMismatchError('x'), 5, 409],
  CollisionError: [new CollisionError('/m.md'), 1, 409],
  PartialDeliveryError: [new PartialDeliveryError(['a'], ['b'], [], new Error('x')), 1, 500],
  MessageInvalidError: [new MessageInvalidError('parse_error', 'x'), 1, 422],
  AmqrcError: [new AmqrcError('.amqrc', 'x'), 1, 500],
  DlqRetryError: [new DlqRetryError('x'), 1, 409],
  ActionRequiredError: [new ActionRequiredError('x'), 6, 409],
  GitError: [new GitError(['status'], 128, 'fatal: not a git repository'), 1, 500],
  MergeConflictError: [new MergeConflictError('b', 'main', ['a.ts']), 1, 409],
  BranchInUseError: [new BranchInUseError('troupe/T-1--a'), 1, 409],
  NoCommitError: [new NoCommitError('/repo', 'master'), 1, 409],
  ScriptedEffectError: [new ScriptedEffectError('x'), 2, 422],
  ApiError: [new ApiError(409, 'agent_exists', 'x'), 1, 409],
  RegistryError: [new RegistryError('x'), 1, 502],
  TrackerError: [new TrackerError('unreachable', 'x'), 1, 502],
  IntegrityError: [new IntegrityError('x'), 7, 409],
};

const src = fileURLToPath(new URL('..', import.meta.url));

/** `class X extends TroupeError` anywhere in src/ (tests aside). */
function troupeErrorClasses(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return troupeErrorClasses(path);
    if (!entry.name.endsWith('.ts') || entry.name.endsWith('.test.ts')) return [];
    return [...readFileSync(path, 'utf8').matchAll(/class (\w+) extends TroupeError\b/g)].map((m) => m[1]!);
  });
}

describe('error codes', () => {
  it('lists every TroupeError class in src/ here', () => {
    expect(troupeErrorClasses(src).sort()).toEqual(Object.keys(NAMED).sort());
  });

  it.each(Object.entries(NAMED))('%s: its exit code and HTTP status', (name, [error, exit, status]) => {
    expect(isTroupeError(error)).toBe(true);
    expect(error.name).toBe(name);
    expect(exitCodeFor(error)).toBe(exit);
    expect(STATUS_BY_CODE[error.code]).toBe(status);
  });

  it('anything that is not a TroupeError exits 1', () => {
    expect(exitCodeFor(new Error('x'))).toBe(Exit.failed);
    expect(exitCodeFor('a string')).toBe(Exit.failed);
  });

  it('the API answers a TroupeError with its status, code and hint, an ApiError with its own status', async () => {
    const app = new Hono();
    app.get('/amqrc', () => {
      throw new AmqrcError('/p/.amqrc', 'invalid JSON');
    });
    app.get('/api', () => {
      throw new ApiError(422, 'pipeline_invalid', 'bad', { diagnostics: [] });
    });
    app.get('/bug', () => {
      throw new TypeError(
        "The argument 'path' must be a string without null bytes. Received '/opt/troupe/x'",
      );
    });
    app.onError((error, c) => errorResponse(c, error));
    const amqrc = await app.request('/amqrc');
    expect(amqrc.status).toBe(500);
    expect(await amqrc.json()).toEqual({
      error: {
        code: 'bus_config_invalid',
        message: '/p/.amqrc: invalid JSON',
        hint: 'fix the file, or pass --root / set AM_ROOT to use another root on purpose',
      },
    });
    const api = await app.request('/api');
    expect(api.status).toBe(422);
    expect(await api.json()).toEqual({
      error: { code: 'pipeline_invalid', message: 'bad', diagnostics: [] },
    });
    // an unexpected error: a generic answer; what Node said (paths, internals) goes to the log only
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const bug = await app.request('/bug');
    expect(bug.status).toBe(500);
    expect(await bug.json()).toEqual({
      error: { code: 'internal', message: 'internal error', hint: 'the server log says what went wrong' },
    });
    expect(log.mock.calls.flat().join(' ')).toContain("Received '/opt/troupe/x'");
    log.mockRestore();
  });
});
