// Go prints times with nanoseconds; Date has milliseconds. Anchoring the monotonic clock to the
// wall clock once gives ns-resolution timestamps that also never go backwards within a process.
const anchor = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();

/** Nanoseconds since the epoch. */
export function nowNs(): bigint {
  return anchor + process.hrtime.bigint();
}

// The date and time to the second, as toISOString writes it: computed once a second, since a
// Date and its string cost more than the rest of stamping a message (a send stamps two).
let cachedSecond = Number.NaN;
let cachedIso = '';
let cachedStamp = '';

function cacheSecond(ns: bigint): void {
  const second = Number(ns / 1_000_000_000n);
  if (second === cachedSecond) return;
  cachedIso = new Date(second * 1000).toISOString().slice(0, 19);
  cachedStamp = cachedIso.replaceAll(':', '-');
  cachedSecond = second;
}

function isoSeconds(ns: bigint): string {
  cacheSecond(ns);
  return cachedIso;
}

/** Go's time.RFC3339Nano in UTC: trailing zeros of the fraction trimmed, no fraction when zero. */
export function rfc3339Nano(ns: bigint = nowNs()): string {
  const frac = (ns % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return `${isoSeconds(ns)}${frac ? `.${frac}` : ''}Z`;
}

/** Go's time.RFC3339 in UTC (whole seconds). */
export function rfc3339(ns: bigint = nowNs()): string {
  return `${isoSeconds(ns)}Z`;
}

/** The time part of a message id: `2026-08-22T11-12-13.123Z`. */
export function idStamp(ns: bigint): string {
  const millis = String(Number((ns / 1_000_000n) % 1000n)).padStart(3, '0');
  cacheSecond(ns);
  return `${cachedStamp}.${millis}Z`;
}

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/**
 * Parses RFC3339 with optional fraction (what Go's time.Parse(RFC3339Nano) accepts) into
 * nanoseconds since the epoch, for sorting; undefined when it is not a valid time.
 */
export function parseRfc3339(text: string): bigint | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, min, sec] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || min > 59 || sec > 59) return undefined;
  if (day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return undefined;
  let offsetMin = 0;
  if (m[8]) {
    const oh = Number(m[9]);
    const om = Number(m[10]);
    if (oh > 23 || om > 59) return undefined;
    offsetMin = (m[8] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const ms = Date.UTC(year, month - 1, day, hour, min, sec) - offsetMin * 60_000;
  const frac = BigInt((m[7] ?? '').padEnd(9, '0') || '0');
  return BigInt(ms) * 1_000_000n + frac;
}
