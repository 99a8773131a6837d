import { describe, expect, it } from 'vitest';
import { NotFoundError, UsageError } from '../core/errors.js';
import { nextVersion, parsePipelineRef, resolveVersion, sortVersions, versionOfFolder } from './reference.js';

const published = ['1.10.0', '1.2.0', '1.9.0', '1.2.3', '1.3.0', '2.0.0-rc.1', '0.9.1'];

describe('pipeline references', () => {
  it('reads NAME, NAME@version and NAME@range', () => {
    expect(parsePipelineRef('review')).toEqual({ name: 'review', range: null });
    expect(parsePipelineRef('review@1.2.3')).toEqual({ name: 'review', range: '1.2.3' });
    expect(parsePipelineRef('code.review_2@^1.2')).toEqual({ name: 'code.review_2', range: '^1.2' });
    expect(parsePipelineRef('review@~1.2.3')).toEqual({ name: 'review', range: '~1.2.3' });
  });

  it('refuses a bad name or range', () => {
    expect(() => parsePipelineRef('../etc@1.0.0')).toThrow(UsageError);
    expect(() => parsePipelineRef('.hidden')).toThrow(UsageError);
    expect(() => parsePipelineRef('review@not-a-range')).toThrow(/not a version or semver range/);
  });
});

describe('versions', () => {
  it('sorts by semver, not as strings: 1.9.0 before 1.10.0, a prerelease before its release', () => {
    expect(sortVersions([...published, '2.0.0'])).toEqual([
      '0.9.1',
      '1.2.0',
      '1.2.3',
      '1.3.0',
      '1.9.0',
      '1.10.0',
      '2.0.0-rc.1',
      '2.0.0',
    ]);
  });

  it('reads troupe and aqm version folders', () => {
    expect(versionOfFolder('1.2.0')).toBe('1.2.0');
    expect(versionOfFolder('v1.2.0')).toBe('1.2.0');
    expect(versionOfFolder('latest')).toBeNull();
    expect(versionOfFolder('1.2')).toBeNull();
  });

  it('resolves a range to the highest version satisfying it', () => {
    expect(resolveVersion('r', published, null)).toBe('1.10.0'); // not the prerelease, not "1.9.0" by string
    expect(resolveVersion('r', published, '1.2.0')).toBe('1.2.0');
    expect(resolveVersion('r', published, '^1.2')).toBe('1.10.0');
    expect(resolveVersion('r', published, '~1.2.0')).toBe('1.2.3');
    expect(resolveVersion('r', published, '~1.2.3')).toBe('1.2.3');
    expect(resolveVersion('r', published, '^0.9')).toBe('0.9.1');
    expect(resolveVersion('r', published, '>=2.0.0-rc.0')).toBe('2.0.0-rc.1');
    expect(resolveVersion('r', ['1.0.0-beta.1', '1.0.0-beta.2'], null)).toBe('1.0.0-beta.2');
  });

  it('says what exists when nothing satisfies the range', () => {
    expect(() => resolveVersion('r', published, '^3')).toThrow(NotFoundError);
    expect(() => resolveVersion('r', published, '^3')).toThrow(/no version of r satisfies \^3/);
    expect(() => resolveVersion('r', [], null)).toThrow(/has no pipeline named "r"/);
  });

  it('picks the next version: explicit, else the latest bumped, else 1.0.0', () => {
    expect(nextVersion([], {})).toBe('1.0.0');
    expect(nextVersion(published, {})).toBe('2.0.0'); // the patch of 2.0.0-rc.1 is its release
    expect(nextVersion(['1.9.0', '1.10.0'], {})).toBe('1.10.1');
    expect(nextVersion(['1.9.0', '1.10.0'], { bump: 'minor' })).toBe('1.11.0');
    expect(nextVersion(['1.9.0', '1.10.0'], { bump: 'major' })).toBe('2.0.0');
    expect(nextVersion(['1.9.0'], { version: '3.0.0' })).toBe('3.0.0');
    expect(() => nextVersion([], { version: 'v3' })).toThrow(UsageError);
  });
});
