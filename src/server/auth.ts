import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';

/**
 * Who may talk to the server. With a token (the default: `serve` makes one per project and user,
 * token-file.ts), every request carries it: `Authorization: Bearer`, `?token=` (EventSource cannot
 * set headers; a page opened with it also gets a SameSite=Strict cookie and is redirected to the
 * same URL without it), or that cookie, which a one-time login link (`?login=`) also sets. Without
 * one (`serve --no-token`, loopback only), the Host header must name the loopback (no DNS
 * rebinding). Requests that change anything must also come from this origin: a page on another
 * site cannot post here.
 */
export interface AuthOptions {
  token: string | null;
  logins?: LoginLinks;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Links that open the dashboard once (`/?login=<code>`): printed by `serve` instead of the token,
 * so a terminal's scrollback or a log holds nothing that still opens the server. A code is good
 * for one visit, which turns it into the token's cookie.
 */
export class LoginLinks {
  private readonly codes = new Set<string>();

  issue(): string {
    const code = randomBytes(24).toString('base64url');
    this.codes.add(code);
    return code;
  }

  /** Whether the code was issued and not used yet; it is used up either way. */
  take(code: string): boolean {
    return this.codes.delete(code);
  }
}

export function isLoopback(host: string): boolean {
  return LOOPBACK_HOSTS.has(host) || /^127(\.\d{1,3}){3}$/.test(host);
}

export function guard(options: AuthOptions): MiddlewareHandler {
  const expected = options.token ? digest(options.token) : null;
  return async (c, next) => {
    const host = c.req.header('host') ?? '';
    // a name no URL can hold (127.0.0.256) would fail later, when the request's URL is built
    if (host && !URL.canParse(`http://${host}/`)) {
      return denied(c, 400, 'bad_request', 'the Host header is not a valid host name or address');
    }
    // cookies ignore ports: the name carries it so two servers on one host keep their own
    const cookieName = `troupe_token_${host.match(/:(\d+)$/)?.[1] ?? 'default'}`;
    if (!expected && !isLoopback(hostName(host))) {
      return denied(c, 403, 'forbidden_host', `requests must be addressed to the loopback, not ${host}`);
    }
    if (!SAFE_METHODS.has(c.req.method) && !sameOrigin(c, host)) {
      return denied(c, 403, 'forbidden_origin', 'state-changing requests must come from this origin');
    }
    if (!expected) return next();
    const login = c.req.query('login');
    if (login !== undefined && c.req.method === 'GET' && !c.req.path.startsWith('/api/')) {
      if (!options.logins?.take(login)) {
        return denied(
          c,
          401,
          'unauthorized',
          'this login link was used already; open the one `troupe serve` printed last, or add ?token=',
        );
      }
      setCookie(c, cookieName, options.token!, {
        httpOnly: true,
        sameSite: 'Strict',
        path: '/',
        maxAge: 30 * 86_400,
      });
      const url = new URL(c.req.url);
      url.searchParams.delete('login');
      return c.redirect(`${url.pathname}${url.search}`, 302);
    }
    const fromQuery = c.req.query('token');
    const given = bearer(c.req.header('authorization')) ?? fromQuery ?? getCookie(c, cookieName) ?? null;
    if (given === null || !timingSafeEqual(digest(given), expected)) {
      return denied(c, 401, 'unauthorized', 'a valid token is needed (Authorization: Bearer, or ?token=)');
    }
    if (fromQuery !== undefined && c.req.method === 'GET' && !c.req.path.startsWith('/api/')) {
      setCookie(c, cookieName, fromQuery, { httpOnly: true, sameSite: 'Strict', path: '/' });
      const url = new URL(c.req.url);
      url.searchParams.delete('token');
      return c.redirect(`${url.pathname}${url.search}`, 302);
    }
    return next();
  };
}

function sameOrigin(c: Context, host: string): boolean {
  const origin = c.req.header('origin');
  if (origin !== undefined) return origin === `http://${host}` || origin === `https://${host}`;
  const site = c.req.header('sec-fetch-site');
  // no Origin and no Fetch Metadata: not a browser, so not a cross-site request
  return site === undefined || site === 'same-origin' || site === 'none';
}

function bearer(header: string | undefined): string | undefined {
  const match = header?.match(/^Bearer\s+(.+)$/i);
  return match?.[1]?.trim();
}

function hostName(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  return host.replace(/:\d+$/, '');
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function denied(c: Context, status: 400 | 401 | 403, code: string, message: string): Response {
  return c.json({ error: { code, message } }, status);
}
