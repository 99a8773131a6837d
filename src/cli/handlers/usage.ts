import { openProject } from '../../app/project.js';
import { UsageError } from '../../core/errors.js';
import { findNode } from '../../core/pipeline.js';
import { type CommandIo, writeJson } from '../command-io.js';

export interface UsageFlags {
  task?: string;
  since?: string;
  by: string;
  json?: boolean;
}

interface Row {
  key: string;
  stages: number;
  input_tokens: number;
  /** Input read from the provider's cache: not in input_tokens, and priced lower. */
  cache_read_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

const emptyRow = (key: string): Row => ({
  key,
  stages: 0,
  input_tokens: 0,
  cache_read_tokens: 0,
  output_tokens: 0,
  cost_usd: 0,
});

/** `troupe usage`: tokens and cost of the completed stages, in total and by agent, model, runtime or task. */
export async function reportUsage(flags: UsageFlags, io: CommandIo): Promise<number> {
  if (!['agent', 'model', 'runtime', 'task'].includes(flags.by)) {
    throw new UsageError(`--by ${flags.by}: use agent, model, runtime or task`);
  }
  const since = flags.since ? Date.parse(flags.since) : null;
  if (since !== null && Number.isNaN(since)) throw new UsageError(`--since ${flags.since} is not a date`);
  const project = openProject(io.cwd);
  const ids = flags.task
    ? [flags.task]
    : project.store
        .tasks()
        .filter((t) => since === null || Date.parse(t.created) >= since)
        .map((t) => t.id);
  const rows = new Map<string, Row>();
  const total = emptyRow('total');
  for (const id of ids) {
    const state = project.tasks.state(id);
    for (const stage of state.stages) {
      if (stage.status !== 'completed') continue;
      const node = findNode(state.definition, stage.agent);
      // a routed stage ran on its tier's runtime and model, not the agent's `auto`
      const ran = state.routes[stage.n] ?? (node?.type === 'agent' ? node : null);
      const key =
        flags.by === 'task'
          ? id
          : flags.by === 'agent'
            ? stage.agent
            : ran
              ? ranOn(flags.by, ran, state.script !== null)
              : 'session';
      const row = rows.get(key) ?? emptyRow(key);
      for (const r of [row, total]) {
        r.stages++;
        r.input_tokens += stage.usage.input_tokens;
        r.cache_read_tokens += stage.usage.cache_read_tokens ?? 0;
        r.output_tokens += stage.usage.output_tokens;
        r.cost_usd += stage.usage.cost_usd ?? 0;
      }
      rows.set(key, row);
    }
  }
  const sorted = [...rows.values()].sort(
    (a, b) => b.input_tokens + b.output_tokens - (a.input_tokens + a.output_tokens),
  );
  if (flags.json) {
    writeJson(io, { total, by: flags.by, rows: sorted });
    return 0;
  }
  const columns = (key: string, ...cells: string[]) =>
    [key.padEnd(24), ...cells.map((c, i) => c.padStart(i === 0 ? 6 : 10))].join(' ');
  const line = (r: Row) =>
    columns(
      r.key,
      String(r.stages),
      String(r.input_tokens),
      String(r.cache_read_tokens),
      String(r.output_tokens),
      `$${r.cost_usd.toFixed(4)}`,
    );
  const header = columns(flags.by, 'stages', 'input', 'cached', 'output', 'cost');
  io.out(`${[header, ...sorted.map(line), line(total)].join('\n')}\n`);
  return 0;
}

/**
 * What a stage ran on, for `--by model` and `--by runtime`. A task run with `--script` ran no
 * runtime at all: it is labelled scripted, with the model it stood in for when one was named.
 */
function ranOn(by: string, ran: { runtime: string; model: string | null }, withScript: boolean): string {
  const scripted = withScript || ran.runtime === 'scripted';
  if (by === 'runtime') return scripted ? 'scripted' : ran.runtime;
  if (scripted) return ran.model ? `${ran.model} (scripted)` : 'scripted';
  return ran.model ?? `${ran.runtime} default`;
}
