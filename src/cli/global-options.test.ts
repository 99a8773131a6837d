import { describe, expect, it } from 'vitest';
import { takeOption } from './global-options.js';

describe('takeOption', () => {
  it('takes the option before or after the command, in both spellings, the last one winning', () => {
    expect(takeOption(['node', 'troupe', '--store', 'a.db', 'list'], '--store')).toEqual({
      value: 'a.db',
      rest: ['node', 'troupe', 'list'],
    });
    expect(takeOption(['node', 'troupe', 'status', 'T-1', '--store=pg://x', '--json'], '--store')).toEqual({
      value: 'pg://x',
      rest: ['node', 'troupe', 'status', 'T-1', '--json'],
    });
    expect(takeOption(['troupe', '--store', 'a', 'list', '--store', 'b'], '--store').value).toBe('b');
  });

  it('leaves everything after -- alone, and a trailing --store without a value to commander', () => {
    expect(takeOption(['troupe', 'run', '--', '--store', 'x'], '--store')).toEqual({
      value: undefined,
      rest: ['troupe', 'run', '--', '--store', 'x'],
    });
    expect(takeOption(['troupe', 'list', '--store'], '--store')).toEqual({
      value: undefined,
      rest: ['troupe', 'list', '--store'],
    });
  });
});
