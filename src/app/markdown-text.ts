import { printable, printableLines } from '../core/printable.js';
import { webAddress } from '../core/web-address.js';

/**
 * Text written by someone else (an issue, an agent's output, an error quoting either) made safe to
 * put into Markdown troupe posts (the progress comment on a tracker's issue): it reads as the
 * words it is, and can neither add markup, raw HTML, images or `[text](url)` links of its own, nor
 * ping people. (A bare `https://…` in it may still be shown as a link by GitHub's autolinking, as
 * in any comment: only http(s) and mailto addresses are.)
 */

/**
 * One line of inline text: control characters and line breaks folded into spaces, every ASCII
 * punctuation mark that Markdown (CommonMark, GFM tables) gives a meaning backslash-escaped,
 * an `@` kept from starting a mention, and at most `max` characters.
 */
export function markdownInline(text: string, max = 200): string {
  const line = printable(text);
  const cut = line.length > max ? `${line.slice(0, max - 1)}…` : line;
  // a zero-width space after `@` keeps `@name` and `@org/team` from notifying anyone
  return cut.replace(MARKDOWN_PUNCTUATION, '\\$&').replace(/@/g, '@\u200b');
}

/**
 * A fenced code block holding `text` as it is (at most `maxLines` lines): its fence is longer than
 * any run of backticks in the text, so no line of it can close the block; inside it nothing is
 * markup, HTML or a mention.
 */
export function markdownFence(text: string, maxLines = 20): string {
  const lines = printableLines(text).split('\n');
  const kept = lines.length > maxLines ? [...lines.slice(0, maxLines), '…'] : lines;
  const body = kept.join('\n');
  const longest = Math.max(0, ...(body.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}text\n${body}\n${fence}`;
}

/** A link to `url` when it is an http(s) address, its label made inline-safe; else the label alone. */
export function markdownLink(label: string, url: string | null): string {
  const safeLabel = markdownInline(label);
  const href = webAddress(url);
  // parentheses and spaces would end the link's destination early: percent-encoded
  const destination = href?.replace(
    /[()<>\s]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
  return destination ? `[${safeLabel}](${destination})` : safeLabel;
}

// CommonMark lets any ASCII punctuation be escaped; these are the ones that can start or end
// markup somewhere (emphasis, code, links, images, headings, lists, tables, HTML, entities)
const MARKDOWN_PUNCTUATION = /[\\`*_{}[\]()<>#+\-.!|~&:=]/g;
