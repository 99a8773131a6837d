/**
 * JSON as Go's json.MarshalIndent writes it, so files we write are byte-identical to AMQ's and
 * its "same name, same bytes = delivered" check holds across the two tools: `<`, `>`, `&`, U+2028
 * and U+2029 escaped, and object keys of free-form maps sorted by their UTF-8 bytes.
 */
export function goJson(value: unknown, sortKeys = false): string {
  const text = JSON.stringify(sortKeys ? sortMaps(value) : value, null, 2);
  return text.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function sortMaps(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortMaps);
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const out: Record<string, unknown> = {};
  for (const key of keys) out[key] = sortMaps((value as Record<string, unknown>)[key]);
  return out;
}
