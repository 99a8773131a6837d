// The baseline: LangGraph JS running the same n-node chain, checkpointed to SQLite on a real file.
import { join } from 'node:path';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import Database from 'better-sqlite3';
import { nowMs, reply } from './lib.js';

const ChainState = Annotation.Root({
  outputs: Annotation({ reducer: (left, right) => left.concat(right), default: () => [] }),
});

/**
 * A StateGraph of `nodes` nodes in a chain; each returns its canned string, appended to state.
 * Compiled with a SqliteSaver on `dir/langgraph.db`. `durability: 'sync'` makes every
 * checkpoint land before the next node runs (what troupe does with its events); LangGraph's
 * own default is 'async' (the checkpoint is written while the next node runs).
 * `synchronous` (optional) sets SQLite's synchronous pragma on the saver's connection;
 * left unset, it is SQLite's default (FULL), as `SqliteSaver.fromConnString` gives.
 */
export function langGraphChain(dir, { nodes = 10, durability = 'sync', synchronous } = {}) {
  const db = new Database(join(dir, `langgraph-${durability}-${synchronous ?? 'default'}.db`));
  if (synchronous) db.pragma(`synchronous = ${synchronous}`);
  const checkpointer = new SqliteSaver(db);
  let builder = new StateGraph(ChainState);
  for (let i = 1; i <= nodes; i++) {
    const text = reply(i);
    builder = builder.addNode(`n${i}`, () => ({ outputs: [text] }));
  }
  builder = builder.addEdge(START, 'n1');
  for (let i = 1; i < nodes; i++) builder = builder.addEdge(`n${i}`, `n${i + 1}`);
  builder = builder.addEdge(`n${nodes}`, END);
  const graph = builder.compile({ checkpointer });
  let thread = 0;
  return {
    nodes,
    /** One invocation on a new thread; returns its wall time in ms. */
    async runOnce() {
      const config = { configurable: { thread_id: `bench-${process.pid}-${++thread}` }, durability };
      const t0 = nowMs();
      const result = await graph.invoke({ outputs: [] }, config);
      const ms = nowMs() - t0;
      if (result.outputs.length !== nodes)
        throw new Error(`langgraph ran ${result.outputs.length} of ${nodes} nodes`);
      return ms;
    },
    close() {
      db.close();
    },
  };
}
