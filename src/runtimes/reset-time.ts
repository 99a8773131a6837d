/**
 * When a limit resets, from the wordings the CLIs print. Every function takes `now`, so the
 * parsing is a pure function of the text (tests pin the clock).
 */

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY_MS = 24 * 3600 * 1000;

/**
 * Claude Code, every version seen: `resets 11:32am (UTC)`, `resets Dec 2, 12:02pm (UTC)`,
 * `resets Nov 13 at 9am`, `resets Jul 27 at 4:30am (Asia/Calcutta)`,
 * `Your limit will reset at 5pm (Europe/Warsaw).`, and 1.0's `usage limit reached|1750708800`.
 */
export function parseClaudeReset(text: string, now: Date): Date | undefined {
  const epoch = /usage limit reached\|(\d{9,11})/i.exec(text);
  if (epoch) return new Date(Number(epoch[1]) * 1000);
  const m =
    /\bresets?\s+(?:at\s+)?(?:([A-Z][a-z]{2})[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?(?:\s+(\d{4}),?)?(?:\s+at)?\s+)?(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\.?(?:\s*\(([^)]+)\))?/i.exec(
      text,
    );
  if (!m) return undefined;
  const [, mon, day, year, hour, minute, ap, zone] = m;
  const h = (Number(hour) % 12) + (ap!.toLowerCase() === 'p' ? 12 : 0);
  return wallClock(now, zone?.trim(), {
    month: mon ? MONTHS.indexOf(mon.toLowerCase()) : undefined,
    day: day ? Number(day) : undefined,
    year: year ? Number(year) : undefined,
    hour: h,
    minute: minute ? Number(minute) : 0,
  });
}

/**
 * Codex: `try again at 1:13 PM.` or `try again at Dec 2nd, 2026 10:03 AM.`, in the process's
 * time zone, which troupe sets to UTC for exactly this.
 */
export function parseCodexReset(text: string, now: Date): Date | undefined {
  const m =
    /try again at (?:([A-Z][a-z]{2}) (\d{1,2})(?:st|nd|rd|th)?, (\d{4}) )?(\d{1,2}):(\d{2}) ([AP])M/i.exec(
      text,
    );
  if (!m) return undefined;
  const [, mon, day, year, hour, minute, ap] = m;
  const h = (Number(hour) % 12) + (ap!.toUpperCase() === 'P' ? 12 : 0);
  return wallClock(now, 'UTC', {
    month: mon ? MONTHS.indexOf(mon.toLowerCase()) : undefined,
    day: day ? Number(day) : undefined,
    year: year ? Number(year) : undefined,
    hour: h,
    minute: Number(minute),
  });
}

/**
 * Gemini: `quotaResetTimeStamp` when the error carries it, else `reset after 8h44m7s` (or the
 * `quotaResetDelay` / `Suggested retry after 1s` / `Please retry in 3.2s` delays) from now.
 */
export function parseGeminiReset(text: string, now: Date): Date | undefined {
  const stamp = /quotaResetTimeStamp['"]?\s*[:=]\s*['"]?(\d{4}-\d{2}-\d{2}T[0-9:.]+Z)/.exec(text);
  if (stamp) return new Date(stamp[1]!);
  const delay =
    /reset after ((?:\d+h)?(?:\d+m)?(?:\d+(?:\.\d+)?s)?)/i.exec(text) ??
    /quotaResetDelay['"]?\s*[:=]\s*['"]?((?:\d+h)?(?:\d+m)?(?:\d+(?:\.\d+)?s)?)/.exec(text) ??
    /retryDelay['"]?\s*[:=]\s*['"]?(\d+(?:\.\d+)?s)/.exec(text) ??
    /(?:Suggested retry after|Please retry in|retry in) ((?:\d+h)?(?:\d+m)?(?:\d+(?:\.\d+)?m?s))/i.exec(text);
  const ms = delay ? parseDuration(delay[1]!) : undefined;
  return ms === undefined ? undefined : new Date(now.getTime() + ms);
}

/** `8h44m7s`, `6m0s`, `1.5s`, `20ms` → milliseconds; undefined when there is no number. */
export function parseDuration(text: string): number | undefined {
  let total = 0;
  let found = false;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) {
    found = true;
    const n = Number(m[1]);
    total += m[2] === 'h' ? n * 3600_000 : m[2] === 'm' ? n * 60_000 : m[2] === 's' ? n * 1000 : n;
  }
  return found ? Math.round(total) : undefined;
}

/** HTTP `retry-after`: seconds or an HTTP date. */
export function parseRetryAfter(value: string | null | undefined, now: Date): Date | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return new Date(now.getTime() + Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : new Date(date);
}

interface WallTime {
  year: number | undefined;
  month: number | undefined;
  day: number | undefined;
  hour: number;
  minute: number;
}

/**
 * The instant a wall-clock time names in `zone` (the local zone when unknown or absent): the
 * next such time after `now` when the date is left out, this year's (or next year's) when only
 * the year is.
 */
function wallClock(now: Date, zone: string | undefined, t: WallTime): Date | undefined {
  const tz = validZone(zone);
  const today = partsIn(now, tz);
  if (t.month !== undefined && t.month < 0) return undefined;
  const year = t.year ?? today.year;
  const month = t.month ?? today.month;
  const day = t.day ?? today.day;
  let at = zonedToUtc(year, month, day, t.hour, t.minute, tz);
  if (t.day === undefined) {
    if (at < now.getTime() - 60_000) at = zonedToUtc(year, month, day + 1, t.hour, t.minute, tz);
  } else if (t.year === undefined && at < now.getTime() - DAY_MS) {
    at = zonedToUtc(year + 1, month, day, t.hour, t.minute, tz);
  }
  return new Date(at);
}

function validZone(zone: string | undefined): string | undefined {
  if (!zone) return undefined;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone;
  } catch {
    return undefined;
  }
}

function partsIn(date: Date, tz: string | undefined) {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: tz,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(date);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return {
    year: get('year'),
    month: get('month') - 1,
    day: get('day'),
    hour: get('hour'),
    minute: get('minute'),
    second: get('second'),
  };
}

function zonedToUtc(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  tz?: string,
): number {
  const guess = Date.UTC(year, month, day, hour, minute);
  const offset = (at: number) => {
    const p = partsIn(new Date(at), tz);
    return Date.UTC(p.year, p.month, p.day, p.hour, p.minute, p.second) - at;
  };
  const first = guess - offset(guess);
  return guess - offset(first);
}
