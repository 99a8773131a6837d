/**
 * A url someone else gave (a tracker's issue address, a pull request's) as something troupe may
 * link to: an http(s) address, normalised, or null for anything else — `javascript:`, `data:`,
 * `file:`, or text that is no url at all. The dashboard and the Markdown troupe posts both ask here.
 */
export function webAddress(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : null;
  } catch {
    return null;
  }
}
