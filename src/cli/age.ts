import { UsageError } from '../core/errors.js';

const UNITS: Record<string, number> = { w: 604_800_000, d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 };

/** An age such as `30d`, `12h`, `1d12h` or `90m` (weeks, days, hours, minutes, seconds) in milliseconds. */
export function parseAge(text: string, flag: string): number {
  const re = /(\d+)([wdhms])/gy;
  let total = 0;
  let matched = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    total += Number(m[1]) * UNITS[m[2]!]!;
    matched = re.lastIndex;
  }
  if (matched === 0 || matched !== text.length || total <= 0)
    throw new UsageError(`invalid ${flag} '${text}' (examples: 30d, 12h, 1d12h, 90m)`);
  return total;
}
