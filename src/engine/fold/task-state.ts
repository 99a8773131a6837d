import type { StoredEvent } from '../../core/events.js';
import { deriveStatus, ENDS_TASK, initialState } from './lifecycle.js';
import { reducers } from './reducers.js';
import type { FoldedEventType, Reducer, TaskState } from './types.js';

/**
 * A task's state is a fold of its events: `foldEvents` for a whole log, `applyEvent` for one
 * more. Nothing here does I/O or reads a clock; times come from the events. Each event type's
 * reducer is in fold/ (reducers.ts lists them); this is the entry point the rest of troupe reads.
 */

export { branchLineage, lineageIn, openActivations } from './activations.js';
export { conflictInput } from './branches.js';
export { deriveStatus, mailboxWaits, waitingFor } from './lifecycle.js';
export {
  isPieceLineage,
  type PieceStatus,
  pieceActivations,
  pieceBranch,
  pieceOf,
  pieceOfActivation,
  pieceStatus,
  plannerNode,
} from './plans.js';
export { recordStageInContext } from './stage-records.js';
export type {
  Activation,
  Branch,
  BranchWorkspace,
  Group,
  MailboxWait,
  PieceState,
  PlanState,
  RoutedStage,
  SessionProgress,
  StageRecord,
  TaskState,
} from './types.js';
export { workspaceSettings } from './workspace.js';

/** A new state, folded from a whole log (which starts with `task_created`). */
export function foldEvents(events: Iterable<StoredEvent>): TaskState {
  let state: TaskState | undefined;
  for (const event of events) state = applyEvent(state, event);
  if (!state) throw new Error('a task log must start with task_created');
  return state;
}

/**
 * Folds one more event into `state` IN PLACE and returns that same object (a new one only for
 * `task_created`, which starts the state): whoever holds the state sees the event. Code that only
 * reads a state takes it as `Readonly<TaskState>`.
 */
export function applyEvent(state: TaskState | undefined, event: StoredEvent): TaskState {
  if (event.type === 'task_created') return initialState(event);
  if (!state) throw new Error(`event ${event.type} before task_created`);
  state.lastSeq = event.seq;
  state.updatedAt = event.at;
  // the table is keyed by type, so the event fits its reducer (which TypeScript cannot correlate)
  (reducers[event.type] as Reducer<FoldedEventType>)(state, event);
  if (!ENDS_TASK.has(event.type)) state.status = deriveStatus(state);
  return state;
}
