import { describe, expect, it } from 'vitest';
import { UsageError } from '../../core/errors.js';
import { type ServeFlags, serveSettings } from './serve.js';

const flags: ServeFlags = { port: '8000', host: '127.0.0.1', adopt: true, queue: true };
const token = 'a-token-of-enough-length';

describe('serveSettings', () => {
  it("takes the port and host, and by default the project's own token", () => {
    expect(serveSettings(flags, {})).toEqual({
      port: 8000,
      host: '127.0.0.1',
      open: false,
      token: { kind: 'project' },
      adopt: true,
      queue: true,
    });
    expect(
      serveSettings({ ...flags, token: true, open: true, adopt: false, queue: false }, {}),
    ).toMatchObject({
      token: { kind: 'project' },
      open: true,
      adopt: false,
      queue: false,
    });
  });

  it('a token given as a flag wins over TROUPE_TOKEN, which wins over the project’s; --no-token ignores both', () => {
    expect(serveSettings({ ...flags, token }, { TROUPE_TOKEN: `${token}-env` }).token).toEqual({
      kind: 'given',
      value: token,
    });
    expect(serveSettings(flags, { TROUPE_TOKEN: `${token}-env` }).token).toEqual({
      kind: 'given',
      value: `${token}-env`,
    });
    expect(serveSettings({ ...flags, token: false }, { TROUPE_TOKEN: token }).token).toEqual({
      kind: 'none',
    });
  });

  it('refuses a port out of range, a short token, and no token off the loopback', () => {
    for (const port of ['-1', '65536', '80.5', 'http']) {
      expect(() => serveSettings({ ...flags, port }, {})).toThrow(`--port ${port} is not a port`);
    }
    expect(serveSettings({ ...flags, port: '0' }, {}).port).toBe(0);
    expect(() => serveSettings({ ...flags, token: 'short' }, {})).toThrow(/at least 16 characters/);
    expect(() => serveSettings(flags, { TROUPE_TOKEN: 'short' })).toThrow(UsageError);
    expect(() => serveSettings({ ...flags, token: false, host: '0.0.0.0' }, {})).toThrow(
      '--no-token is for the loopback only, not 0.0.0.0',
    );
    expect(serveSettings({ ...flags, token, host: '0.0.0.0' }, {}).host).toBe('0.0.0.0');
  });
});
