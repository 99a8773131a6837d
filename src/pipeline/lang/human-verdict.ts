/**
 * A person's verdict on a gate, in words: `approve`, `approved: LGTM`, `yes`, `lgtm`, `ok`, or
 * `reject: too long`, `no`. The rest of the text is the reason. null when it is neither.
 * Used for scripted answers, replies on the bus and answers at the prompt alike.
 */
export function parseVerdict(text: string): { decision: 'approved' | 'rejected'; reason: string } | null {
  const trimmed = text.trim();
  const approved = /^(?:approved?|yes|y|lgtm|ok)\b[:.!\s]*/i.exec(trimmed);
  if (approved) return { decision: 'approved', reason: trimmed.slice(approved[0].length) };
  const rejected = /^(?:reject(?:ed)?|no|n)\b[:.!\s]*/i.exec(trimmed);
  if (rejected) return { decision: 'rejected', reason: trimmed.slice(rejected[0].length) };
  return null;
}
