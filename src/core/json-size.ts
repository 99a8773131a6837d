/**
 * Whether `value` written as JSON would take more than `limit` bytes, found without writing it.
 * The walk stops once past the limit, so a value that holds one large object many times over (as
 * shared references do) costs no more than the limit, where JSON.stringify would build all of it.
 * Counts strings in UTF-8 bytes with their quotes, keys, and a byte per separator; not escapes.
 */
export function jsonBytesOver(value: unknown, limit: number): boolean {
  let bytes = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === 'string') bytes += Buffer.byteLength(item, 'utf8') + 2;
    else if (item !== null && typeof item === 'object') {
      const children = Array.isArray(item) ? item : Object.values(item);
      // brackets and commas; a key costs its quotes and colon
      bytes += Math.max(2, children.length + 1);
      if (!Array.isArray(item))
        for (const key of Object.keys(item)) bytes += Buffer.byteLength(key, 'utf8') + 3;
      if (bytes > limit) return true;
      for (const child of children) pending.push(child);
    } else bytes += String(item).length;
    if (bytes > limit) return true;
  }
  return false;
}
