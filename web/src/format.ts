import { TERMINAL_STATUSES } from '../../src/core/events';
import type { Status, Usage } from './api';

export function tokens(usage: Usage): string {
  const total = usage.input_tokens + usage.output_tokens;
  return total >= 1000 ? `${(total / 1000).toFixed(1)}k` : String(total);
}

export function cost(usage: Usage): string {
  return usage.cost_usd ? `$${usage.cost_usd.toFixed(usage.cost_usd < 1 ? 3 : 2)}` : '—';
}

export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)}m ${Math.round((ms % 60_000) / 1000)}s`;
  return `${Math.floor(ms / 3_600_000)}h ${Math.round((ms % 3_600_000) / 60_000)}m`;
}

export const ENDED: readonly Status[] = TERMINAL_STATUSES;

export function elapsed(created: string, updated: string, status: Status, now: number): string {
  const end = ENDED.includes(status) || status.startsWith('awaiting') ? Date.parse(updated) : now;
  return duration(end - Date.parse(created));
}

export function ago(iso: string, now: number): string {
  const s = Math.round((now - Date.parse(iso)) / 1000);
  if (s < 60) return `${Math.max(s, 0)}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return new Date(iso).toLocaleDateString();
}

export const STATUS_LABEL: Record<Status, string> = {
  pending: 'pending',
  running: 'running',
  waiting: 'rate-limited',
  awaiting_gate: 'needs approval',
  awaiting_human_input: 'needs answer',
  parked: 'parked',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};
