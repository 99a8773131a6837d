import { Document, isMap, isScalar, isSeq, parseDocument, type YAMLMap, type YAMLSeq } from 'yaml';
import { AgentFields } from './api/pipelines.js';
import { ApiError } from './errors.js';

/**
 * Adding, changing and removing one agent of a pipeline file through the `yaml` Document API,
 * so the comments, key order and layout of everything else in the file stay as they were
 * (aqm re-dumps the whole file and loses them). Only the agent's own text is rewritten: the edit
 * is made on the Document, then spliced into the original text in place of the agent's range,
 * and the splice is used only when it parses to the same data (else the whole Document is
 * written out, which keeps comments too but may restyle flow collections). The caller checks
 * the result before saving it.
 */

/** The fields the agent form edits, in the order new keys are written. */
const AGENT_FIELDS = Object.keys(AgentFields.shape) as (keyof AgentFields)[];

/** The agents as written in the file (each mapping as JSON), for the form to fill in from. */
export function agentsInFile(text: string): Record<string, unknown>[] {
  const doc = parse(text);
  return agentItems(doc).map((item) => (isMap(item) ? (item.toJSON() as Record<string, unknown>) : {}));
}

/** The text with a new agent appended to `agents:`. */
export function addAgent(text: string, body: AgentFields & { id: string }): { text: string; id: string } {
  const doc = parse(text);
  const id = body.id.trim();
  const seq = agentSeq(doc);
  if (findIndex(seq, id) >= 0)
    throw new ApiError(409, 'agent_exists', `the pipeline already has an agent "${id}"`);
  const node = doc.createNode({ id }) as YAMLMap;
  applyFields(doc, node, body);
  seq.items.push(node);
  return { text: spliced(doc, () => appendItem(text, seq, node)), id };
}

/**
 * The text with agent `id` changed: each field present in the body is set (or removed when it
 * is null, "" or empty); fields absent from the body, and keys the form does not know, are left
 * alone. A different `id` in the body renames the agent.
 */
export function updateAgent(text: string, id: string, body: AgentFields): { text: string; id: string } {
  const doc = parse(text);
  const seq = agentSeq(doc);
  const node = seq.items[mustFind(seq, id)];
  if (!isMap(node)) throw new ApiError(422, 'pipeline_invalid', `agent "${id}" is not a mapping`);
  let newId = id;
  if (body.id !== undefined && body.id.trim() !== id) {
    newId = body.id.trim();
    if (findIndex(seq, newId) >= 0)
      throw new ApiError(409, 'agent_exists', `the pipeline already has an agent "${newId}"`);
    node.set('id', newId);
  }
  applyFields(doc, node, body);
  return { text: spliced(doc, () => replaceItem(text, node)), id: newId };
}

/** The text without agent `id`. */
export function removeAgent(text: string, id: string): string {
  const doc = parse(text);
  const seq = agentSeq(doc);
  const [item] = seq.items.splice(mustFind(seq, id), 1);
  return spliced(doc, () => (isMap(item) ? cutItem(text, item) : null));
}

/** The splice when it means the same as the edited Document; else the Document written out. */
function spliced(doc: Document, splice: () => string | null): string {
  const whole = () => doc.toString();
  let result: string | null = null;
  try {
    result = splice();
  } catch {
    return whole();
  }
  if (result === null) return whole();
  const check = parseDocument(result);
  if (check.errors.length || JSON.stringify(check.toJSON()) !== JSON.stringify(doc.toJSON())) return whole();
  return result;
}

/** A block mapping as text at `column`: the first line unindented (it follows "- "), the rest indented. */
function mapText(node: YAMLMap, column: number): string {
  const copy = node.clone() as YAMLMap;
  copy.commentBefore = null;
  copy.spaceBefore = false;
  copy.flow = false;
  const lines = new Document(copy).toString({ lineWidth: 0 }).replace(/\n$/, '').split('\n');
  return lines.map((line, i) => (i === 0 || line === '' ? line : ' '.repeat(column) + line)).join('\n');
}

function columnOf(text: string, offset: number): number {
  return offset - (text.lastIndexOf('\n', offset - 1) + 1);
}

/** The agent's mapping rewritten in place (its range: from its first key to its last line). */
function replaceItem(text: string, node: YAMLMap): string | null {
  const range = node.range;
  if (!range || node.flow) return null;
  const end = text[range[1] - 1] === '\n' ? range[1] - 1 : range[1];
  return text.slice(0, range[0]) + mapText(node, columnOf(text, range[0])) + text.slice(end);
}

/** The agent's lines cut out, from its "- " line to its last line. */
function cutItem(text: string, node: YAMLMap): string | null {
  const range = node.range;
  if (!range || node.flow) return null;
  let lineStart = text.lastIndexOf('\n', range[0] - 1) + 1;
  if (!/^\s*-\s+$/.test(text.slice(lineStart, range[0]))) return null;
  // the comment lines just above it are about it: they go too
  while (node.commentBefore && lineStart > 0) {
    const previous = text.lastIndexOf('\n', lineStart - 2) + 1;
    if (!/^\s*#/.test(text.slice(previous, lineStart))) break;
    lineStart = previous;
  }
  return text.slice(0, lineStart) + text.slice(range[1]);
}

/** A new "- " item after the last one, at the items' indentation. */
function appendItem(text: string, seq: YAMLSeq, node: YAMLMap): string | null {
  const items = seq.items.slice(0, -1);
  const last = items.at(-1);
  if (seq.flow || !isMap(last) || !last.range || !seq.range) return null;
  const dash = text.lastIndexOf('-', (items[0] as YAMLMap).range![0]);
  const column = columnOf(text, dash);
  const at = seq.range[1];
  const before = text.slice(0, at);
  const lead = before.endsWith('\n') ? '' : '\n';
  return `${before}${lead}${' '.repeat(column)}- ${mapText(node, column + 2)}\n${text.slice(at)}`;
}

function parse(text: string): Document {
  const doc = parseDocument(text);
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    const at = e.linePos?.[0];
    throw new ApiError(
      422,
      'pipeline_invalid',
      `the pipeline is not valid YAML${at ? ` (${at.line}:${at.col})` : ''}: fix it in the editor first`,
    );
  }
  return doc;
}

function agentItems(doc: Document): unknown[] {
  const agents = isMap(doc.contents) ? doc.contents.get('agents', true) : undefined;
  return isSeq(agents) ? agents.items : [];
}

function agentSeq(doc: Document): YAMLSeq {
  if (!isMap(doc.contents))
    throw new ApiError(422, 'pipeline_invalid', 'the pipeline file is not a mapping with `agents:`');
  const agents = doc.contents.get('agents', true);
  if (isSeq(agents)) return agents;
  if (agents === undefined || (isScalar(agents) && agents.value === null)) {
    const seq = doc.createNode([]) as YAMLSeq;
    doc.contents.set('agents', seq);
    return seq;
  }
  throw new ApiError(422, 'pipeline_invalid', '`agents:` is not a list');
}

function findIndex(seq: YAMLSeq, id: string): number {
  return seq.items.findIndex((item) => isMap(item) && String(item.get('id')) === id);
}

function mustFind(seq: YAMLSeq, id: string): number {
  const i = findIndex(seq, id);
  if (i < 0) throw new ApiError(404, 'not_found', `the pipeline file has no agent "${id}"`);
  return i;
}

/** Sets or removes each form field present in the body, in the form's order for new keys. */
function applyFields(doc: Document, node: YAMLMap, body: AgentFields): void {
  for (const field of AGENT_FIELDS) {
    if (field === 'id' || !(field in body)) continue;
    const value = fieldValue(field, body[field]);
    if (value === undefined) node.delete(field);
    else if (isScalarValue(value) && isScalar(node.get(field, true))) {
      // keep the scalar's style (a block `|` prompt stays a block)
      (node.get(field, true) as { value: unknown }).value = value;
    } else node.set(field, doc.createNode(value));
  }
}

function isScalarValue(value: unknown): boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/**
 * The YAML value for a field, undefined to remove it. The JSON types are the schema's
 * (AgentFields); what the values mean is checked later by the validator.
 */
function fieldValue<K extends keyof AgentFields>(field: K, value: AgentFields[K]): unknown {
  if (value === null || value === undefined || value === '') return undefined;
  switch (field) {
    case 'handoffs': {
      const list = (value as NonNullable<AgentFields['handoffs']>).map((h) =>
        compact(h, { condition: 'always' }),
      );
      return list.length ? list : undefined;
    }
    case 'gate': {
      const gate = compact(value as NonNullable<AgentFields['gate']>, {});
      if (typeof gate.max_retries === 'string') gate.max_retries = Number(gate.max_retries);
      return Object.keys(gate).length ? gate : undefined;
    }
    case 'mcp':
      return (value as unknown[]).length ? value : undefined;
    case 'human_input': {
      if (typeof value === 'string' || value === true) return value;
      if (value === false) return undefined;
      const h = value as { enabled?: boolean; mode?: string; prompt?: string };
      if (h.enabled === false) return undefined;
      // the short form when it says everything
      if (!h.prompt && h.mode) return h.mode;
      const rest = compact({ ...h, enabled: undefined }, {});
      return Object.keys(rest).length ? rest : true;
    }
    default:
      return value;
  }
}

/** The object without empty values, nor the values that are the default anyway. */
function compact(value: Record<string, unknown>, defaults: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(value).filter(
      ([k, v]) => v !== null && v !== undefined && v !== '' && defaults[k] !== v && k !== 'enabled',
    ),
  );
}
