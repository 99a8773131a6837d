import { describe, expect, it } from 'vitest';
import { namespaced, queueLocation, queueTable, withDefaultSchema } from './queue-namespace.js';

describe('queue namespaces', () => {
  it("reads the schema out of the queue's URL, and names a project's pg-boss schema, channel and tables by it", () => {
    expect(queueLocation('postgres://u@h/db?schema=proj_a&sslmode=require')).toEqual({
      url: 'postgres://u@h/db?sslmode=require',
      schema: 'proj_a',
    });
    expect(queueLocation('postgres://u@h/db')).toEqual({ url: 'postgres://u@h/db', schema: null });
    expect([namespaced('pgboss', 'proj_a'), namespaced('pgboss', null)]).toEqual(['pgboss_proj_a', 'pgboss']);
    expect([queueTable('proj_a', 'troupe_workers'), queueTable(null, 'troupe_workers')]).toEqual([
      '"proj_a".troupe_workers',
      'troupe_workers',
    ]);
  });

  it("keeps a name within pg-boss's 50 characters, apart for each long schema", () => {
    const long = (c: string) => `${c}${'x'.repeat(60)}`;
    const [a, b] = [namespaced('troupe_wake', long('a')), namespaced('troupe_wake', long('b'))];
    expect(a.length).toBeLessThanOrEqual(50);
    expect(a).not.toBe(b);
  });

  it("names the store's schema unless the queue's URL names one", () => {
    expect(withDefaultSchema('postgres://h/db', 'proj_a')).toBe('postgres://h/db?schema=proj_a');
    expect(withDefaultSchema('postgres://h/db?schema=mine', 'proj_a')).toBe('postgres://h/db?schema=mine');
  });
});
