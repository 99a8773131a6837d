import { type Document, isAlias, isCollection, isPair, isScalar, type Node } from 'yaml';

/**
 * The most text aliases may add to a YAML file, in UTF-8 bytes: 1 MiB, the API's body limit.
 * The node count the YAML library caps does not bound this: one large anchor repeated a few
 * hundred times stays under it and still turns a 1 MB file into hundreds of MB of pipeline.
 */
export const MAX_ALIAS_EXPANSION_BYTES = 1024 * 1024;

export interface AliasExpansion {
  /** Bytes the aliases add, counted up to the alias that crossed the cap (if one did). */
  added: number;
  /** Offset of the first alias whose expansion takes the total past the cap. */
  overflowAt?: number;
  /** Offset of the first alias inside the node it names (`&a [*a]`): a value that contains itself. */
  cycleAt?: number;
  /** Nodes visited: each written node once, however often it is aliased. */
  walked: number;
}

/**
 * How much the aliases of `doc` expand it: each alias adds the size of what it stands for (scalar
 * text in UTF-8 bytes, plus one per node so empty values count too). Each anchored node's size is
 * kept once it is known, so an alias costs a lookup and the walk stays linear in the file.
 * Recursive: the caller has already refused nesting deeper than MAX_DEPTH.
 */
export function aliasExpansion(doc: Document.Parsed, cap = MAX_ALIAS_EXPANSION_BYTES): AliasExpansion {
  // the node an alias names is the last one with that anchor before it, in document order
  const anchored = new Map<string, Node>();
  const sizes = new Map<Node, number>();
  const result: AliasExpansion = { added: 0, walked: 0 };

  const sizeOf = (node: unknown): number => {
    if (result.overflowAt !== undefined || result.cycleAt !== undefined || !node) return 0;
    result.walked += 1;
    if (isAlias(node)) {
      const target = anchored.get(node.source);
      // every anchored node has its size once walked: one without is still being walked
      if (target && !sizes.has(target)) {
        result.cycleAt = node.range?.[0] ?? 0;
        return 0;
      }
      const size = (target && sizes.get(target)) ?? 0;
      result.added += size;
      if (result.added > cap) result.overflowAt = node.range?.[0] ?? 0;
      return size;
    }
    const written = node as Node;
    if (written.anchor) anchored.set(written.anchor, written);
    let size = 1;
    if (isScalar(written)) {
      const value = written.value;
      size += typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : String(value).length;
    } else if (isCollection(written)) {
      for (const item of written.items)
        size += isPair(item) ? sizeOf(item.key) + sizeOf(item.value) : sizeOf(item);
    }
    if (written.anchor) sizes.set(written, size);
    return size;
  };

  sizeOf(doc.contents);
  return result;
}
