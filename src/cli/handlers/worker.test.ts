import { describe, expect, it } from 'vitest';
import { isCliRuntime, RUNTIME_NAMES } from '../../core/runtimes.js';
import { type WorkerOptions, workerSettings } from './worker.js';

const options: WorkerOptions = { concurrency: '2', grace: '30', metricsHost: '127.0.0.1' };

describe('workerSettings', () => {
  it('defaults to the runtimes installed here (no CLI on this PATH), no labels and no metrics', () => {
    expect(workerSettings(options, { PATH: '' })).toEqual({
      concurrency: 2,
      grace: 30,
      runtimes: RUNTIME_NAMES.filter((r) => !isCliRuntime(r)),
      labels: [],
      metrics: null,
      queue: undefined,
    });
  });

  it('reads comma lists, the metrics address and the queue', () => {
    expect(
      workerSettings({
        ...options,
        concurrency: '8',
        grace: '2.5',
        runtimes: 'claude, codex',
        labels: 'gpu,eu-west',
        metricsPort: '0',
        metricsHost: '0.0.0.0',
        queue: 'postgres://q',
      }),
    ).toEqual({
      concurrency: 8,
      grace: 2.5,
      runtimes: ['claude', 'codex'],
      labels: ['gpu', 'eu-west'],
      metrics: { port: 0, host: '0.0.0.0' },
      queue: 'postgres://q',
    });
  });

  it('refuses each bad flag with its own message', () => {
    expect(() => workerSettings({ ...options, concurrency: '0' })).toThrow(
      /--concurrency must be a whole number/,
    );
    expect(() => workerSettings({ ...options, concurrency: '1.5' })).toThrow(/--concurrency/);
    expect(() => workerSettings({ ...options, grace: '-1' })).toThrow(/--grace must be a number of seconds/);
    expect(() => workerSettings({ ...options, metricsPort: '70000' })).toThrow(/--metrics-port/);
    expect(() => workerSettings({ ...options, runtimes: 'claude,nosuch' })).toThrow(
      '--runtimes: unknown nosuch',
    );
    expect(() => workerSettings({ ...options, runtimes: ' , ' })).toThrow('--runtimes: unknown (none given)');
    expect(() => workerSettings({ ...options, labels: 'GPU' })).toThrow('--labels: `GPU` is not a label');
  });
});
