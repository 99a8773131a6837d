import { activationReducers } from './activations.js';
import { branchReducers } from './branches.js';
import { gateReducers } from './gates.js';
import { lifecycleReducers } from './lifecycle.js';
import { mailboxReducers } from './mailbox.js';
import { planReducers } from './plans.js';
import { recordReducers } from './records.js';
import { sessionReducers } from './sessions.js';
import { stageReducers } from './stages.js';
import type { Reducers } from './types.js';
import { workspaceReducers } from './workspace.js';

/** Every event type's reducer, by type: typed `Reducers`, so a type without one does not compile. */
export const reducers: Reducers = {
  ...lifecycleReducers,
  ...stageReducers,
  ...mailboxReducers,
  ...gateReducers,
  ...activationReducers,
  ...sessionReducers,
  ...workspaceReducers,
  ...branchReducers,
  ...planReducers,
  ...recordReducers,
};
