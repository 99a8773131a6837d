import type { Octokit } from '@octokit/rest';

/**
 * Conditional GETs: each answer's `etag` is kept with the answer, and the next GET of the same
 * URL sends it as `if-none-match`; GitHub answers 304 when nothing changed, which does not count
 * against the token's rate limit, and the kept answer (its `link` header too, so pagination goes
 * on) is returned. A poll of a quiet repository then costs no rate limit at all.
 */

const MAX_ENTRIES = 200;

interface Kept {
  etag: string;
  response: Awaited<ReturnType<Octokit['request']>>;
}

export function keepEtags(octokit: Octokit) {
  const kept = new Map<string, Kept>();
  octokit.hook.wrap('request', async (request, options) => {
    if (options.method !== 'GET') return request(options);
    const key = octokit.request.endpoint.parse(options).url;
    const before = kept.get(key);
    // the hooks inside this one were bound to this very options object (before-after-hook):
    // a header reaches the wire only if set on it, and on a copy of its headers, which may be
    // the client's shared defaults
    if (before) options.headers = { ...options.headers, 'if-none-match': before.etag };
    try {
      const response = await request(options);
      const etag = response.headers.etag;
      kept.delete(key);
      if (typeof etag === 'string' && etag !== '') {
        kept.set(key, { etag, response });
        if (kept.size > MAX_ENTRIES) kept.delete(kept.keys().next().value!);
      }
      return response;
    } catch (error) {
      if (before && (error as { status?: unknown }).status === 304) return { ...before.response };
      throw error;
    }
  });
}
