import { UsageError } from '../core/errors.js';

const UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Go's time.ParseDuration (`90s`, `1m30s`, `500ms`, `0`) in milliseconds; a bare number is seconds. */
export function parseDuration(text: string, flag = 'duration'): number {
  const s = text.trim();
  if (s === '0') return 0;
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s) * 1000;
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let matched = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    total += Number(m[1]) * UNITS[m[2]!]!;
    matched = re.lastIndex;
  }
  if (matched === 0 || matched !== s.length)
    throw new UsageError(`invalid ${flag} '${text}' (examples: 30s, 2m, 1h30m)`);
  return total;
}
