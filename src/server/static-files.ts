import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Context } from 'hono';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.map': 'application/json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * The built dashboard (dist/web) and nothing outside it. Paths that are not files get
 * index.html, so the dashboard's own routes (/tasks/T-1) load on refresh.
 */
export function serveDashboard(root: string) {
  const base = path.resolve(root);
  return (c: Context): Response => {
    let rel: string;
    try {
      rel = decodeURIComponent(c.req.path);
    } catch {
      return c.text('bad path', 400);
    }
    // no file name holds a NUL, and the file system calls would throw on it
    if (rel.includes('\0')) return c.text('not found', 404);
    const file = path.resolve(base, `.${path.posix.normalize(`/${rel}`)}`);
    if (file !== base && !file.startsWith(`${base}${path.sep}`)) return c.text('not found', 404);
    const found = isFile(file) ? file : path.extname(rel) ? null : path.join(base, 'index.html');
    if (!found || !isFile(found)) {
      if (found) return c.html(notBuilt, 503);
      return c.text('not found', 404);
    }
    const immutable = found.includes(`${path.sep}assets${path.sep}`);
    return new Response(readFileSync(found), {
      headers: {
        'Content-Type': TYPES[path.extname(found)] ?? 'application/octet-stream',
        'Cache-Control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
        'X-Content-Type-Options': 'nosniff',
        'Referrer-Policy': 'no-referrer',
        ...(found.endsWith('.html')
          ? {
              'Content-Security-Policy':
                "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
            }
          : {}),
      },
    });
  };
}

function isFile(file: string): boolean {
  return statSync(file, { throwIfNoEntry: false })?.isFile() ?? false;
}

const notBuilt = `<!doctype html><meta charset="utf-8"><title>troupe</title>
<p>The dashboard is not built. Run <code>npm run build</code>; the API is at <a href="/api/openapi.json">/api/openapi.json</a>.</p>`;
