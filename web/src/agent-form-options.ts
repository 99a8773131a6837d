import {
  CONTEXT_STRATEGIES,
  conditionsFor,
  GATE_TYPES,
  HUMAN_INPUT_MODES,
} from '../../src/core/pipeline-vocabulary.js';

/**
 * What the agent form offers, from the language's own lists. The form edits agents only (a
 * session's row has no Edit), so its handoff conditions are those an agent can fire on.
 */
export const AGENT_FORM_OPTIONS = {
  handoffConditions: conditionsFor('agent'),
  contextStrategies: CONTEXT_STRATEGIES,
  gateTypes: GATE_TYPES,
  humanInputModes: HUMAN_INPUT_MODES,
} as const;
