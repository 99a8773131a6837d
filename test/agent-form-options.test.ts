import { afterEach, describe, expect, it } from 'vitest';
import { CONDITION_KEYWORDS } from '../src/core/pipeline-vocabulary.js';
import { AgentSchema } from '../src/pipeline/schema.js';
import { removeTempDirs, validateYaml } from '../src/pipeline/test-files.js';
import { AGENT_FORM_OPTIONS } from '../web/src/agent-form-options.js';

afterEach(removeTempDirs);

/**
 * The dashboard's agent form offers what troupe accepts for an agent, no more and no less: it once
 * offered `on_fail`, which validated silently and never fired.
 */
describe("the agent form's options", () => {
  /** What `troupe validate` says of a gated agent handing off on `condition`. */
  const diagnostics = (condition: string) =>
    validateYaml(
      `agents:\n  - id: dev\n    runtime: scripted\n    gate: { type: human }\n    handoffs: [{ to: qa, condition: ${condition} }]\n  - id: qa\n    runtime: scripted\n`,
    ).lines;

  it('the handoff conditions are exactly the keywords an agent can hand off on', () => {
    const candidates = [...new Set([...CONDITION_KEYWORDS, ...AGENT_FORM_OPTIONS.handoffConditions])];
    const accepted = candidates.filter((condition) => diagnostics(condition).length === 0);
    expect([...AGENT_FORM_OPTIONS.handoffConditions].sort()).toEqual(accepted.sort());
  });

  it('the context strategies and gate types are the schema’s', () => {
    expect(AGENT_FORM_OPTIONS.contextStrategies).toEqual(AgentSchema.shape.context_strategy.unwrap().options);
    const gate = AgentSchema.shape.gate.unwrap().unwrap();
    expect(AGENT_FORM_OPTIONS.gateTypes).toEqual(gate.shape.type.unwrap().options);
  });

  it('every human input mode validates', () => {
    for (const mode of AGENT_FORM_OPTIONS.humanInputModes) {
      const yaml = `agents:\n  - id: dev\n    runtime: scripted\n    human_input: ${mode}\n`;
      expect(validateYaml(yaml).lines).toEqual([]);
    }
  });
});
