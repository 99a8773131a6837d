/**
 * The pipeline YAML in a model's reply: the last fenced block that holds `agents:` (a model that
 * explains itself often shows fragments first), else the last fenced block, else the reply from
 * its first top-level key on (prose before it dropped).
 */
export function extractYaml(reply: string): string {
  const blocks = [...reply.matchAll(/^[ \t]*(`{3,}|~{3,})[ \t]*([\w-]*)[^\n]*\n([\s\S]*?)^[ \t]*\1[ \t]*$/gm)]
    .filter((m) => ['', 'yaml', 'yml'].includes((m[2] ?? '').toLowerCase()))
    .map((m) => m[3] ?? '');
  const pipeline = blocks.filter((b) => /^agents:/m.test(b)).at(-1) ?? blocks.at(-1);
  if (pipeline !== undefined) return ensureNewline(pipeline);
  const lines = reply.replace(/\r\n/g, '\n').split('\n');
  const start = lines.findIndex((line) => /^(#|[A-Za-z_]+:(\s|$))/.test(line));
  return ensureNewline((start === -1 ? lines : lines.slice(start)).join('\n').trim());
}

function ensureNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}
