import { describe, expect, it } from 'vitest';
import { StoreConfigError } from '../core/errors.js';
import { parseStoreLocation, redactStoreUrl } from './store-url.js';

describe('store URLs', () => {
  it('hides the password, and only the password', () => {
    expect(redactStoreUrl('postgres://troupe:hunter2@db.internal:5432/tasks?sslmode=require')).toBe(
      'postgres://troupe:***@db.internal:5432/tasks?sslmode=require',
    );
    expect(redactStoreUrl('postgres://troupe@db/tasks')).toBe('postgres://troupe@db/tasks');
    expect(redactStoreUrl('/var/lib/troupe.db')).toBe('/var/lib/troupe.db');
    // one the URL parser refuses still loses its password
    expect(redactStoreUrl('postgres://troupe:hunter2@db:port/tasks')).toBe(
      'postgres://troupe:***@db:port/tasks',
    );
  });

  it('picks PostgreSQL for postgres:// and postgresql://, with ?schema= taken out of the URL', () => {
    expect(parseStoreLocation('postgresql://u:p@h/db?schema=team_a&sslmode=require', '/p')).toEqual({
      kind: 'postgres',
      url: 'postgresql://u:p@h/db?sslmode=require',
      schema: 'team_a',
    });
    expect(parseStoreLocation('postgres://h/db', '/p')).toEqual({
      kind: 'postgres',
      url: 'postgres://h/db',
      schema: null,
    });
  });

  it('takes ?lease_seconds= out of the URL: a whole number of seconds, 1 or more', () => {
    expect(parseStoreLocation('postgres://h/db?lease_seconds=5&schema=a', '/p')).toEqual({
      kind: 'postgres',
      url: 'postgres://h/db',
      schema: 'a',
      leaseSeconds: 5,
    });
    for (const bad of ['0', '1.5', 'ten', ''])
      expect(() => parseStoreLocation(`postgres://h/db?lease_seconds=${bad}`, '/p')).toThrow(
        `lease_seconds '${bad}' is not a whole number of seconds, 1 or more`,
      );
  });

  it('takes anything else without a scheme for a SQLite file, relative to the project', () => {
    expect(parseStoreLocation('.troupe/other.db', '/p')).toEqual({
      kind: 'sqlite',
      file: '/p/.troupe/other.db',
    });
    expect(parseStoreLocation('/data/t.db', '/p')).toEqual({ kind: 'sqlite', file: '/data/t.db' });
  });

  it('refuses an unknown scheme or a schema name that is not plain SQL, without the password', () => {
    for (const bad of [
      'mysql://u:hunter2@h/db',
      'postgres://u:hunter2@h/db?schema=x;drop',
      'postgres://u:hunter2@h:99999/db',
    ]) {
      expect(() => parseStoreLocation(bad, '/p')).toThrow(StoreConfigError);
      expect(() => parseStoreLocation(bad, '/p')).not.toThrow(/hunter2/);
    }
  });
});
