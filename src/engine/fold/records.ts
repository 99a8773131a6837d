import type { Reducers } from './types.js';

/**
 * Facts the task keeps beside its stages: the tier each routed stage runs on, its size, its
 * latest spec, the budget warning, and its chunks.
 */

export const recordReducers = {
  decision(state, event) {
    if (event.kind !== 'route') return; // a fallback is logged for people: the fold keeps nothing
    state.routes[event.stage] = {
      tier: event.tier,
      recommended: event.recommended,
      runtime: event.runtime,
      model: event.model,
      effort: event.effort,
    };
  },

  task_sized(state, event) {
    state.size = { size: event.size, by: event.by };
  },

  spec_recorded(state, event) {
    state.spec = { stage: event.stage, agent: event.agent, spec: event.spec };
  },

  budget_warning(state) {
    state.budgetWarned = true;
  },

  chunk_added(state, event) {
    state.chunks.push({ ...event.chunk });
  },

  chunk_updated(state, event) {
    const chunk = state.chunks.find((c) => c.id === event.id);
    if (!chunk) return;
    chunk.status = event.status;
    chunk.updated_at = event.at;
    chunk.completed_by = event.status === 'done' ? event.by : null;
  },

  chunk_removed(state, event) {
    state.chunks = state.chunks.filter((c) => c.id !== event.id);
  },
} satisfies Partial<Reducers>;
