import { z } from 'zod';
import type { RuntimeErrorKind } from './runtime.js';

/**
 * The scripted runtime's script (`troupe run|test --script script.yaml`). A product feature:
 * people unit-test their pipelines offline against it. The contract is documented in
 * docs/scripted-runtime.md; keep both in step. Reading a script file is runtimes/script.ts.
 */

/**
 * The script keys of troupe's own model calls, which are no agent of the pipeline: the
 * `entry_point: auto` router and the routing tier router.
 */
export const ENTRY_ROUTER_ID = '_router';
export const TIER_ROUTER_ID = '_tier_router';
export const ROUTER_IDS: readonly string[] = [ENTRY_ROUTER_ID, TIER_ROUTER_ID];

const UsageShape = z.strictObject({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
});

/** Conditions of an entry: a regex on the rendered prompt, and one on the model it runs on. */
const conditions = {
  when: z.string().optional(),
  model: z.string().optional(),
};

const ReplyEntry = z.strictObject({
  ...conditions,
  reply: z.string(),
  delay_ms: z.number().int().nonnegative().optional(),
  usage: UsageShape.optional(),
  /** Files the agent "writes" in its working directory (null deletes), before it replies. */
  write: z.record(z.string(), z.string().nullable()).optional(),
  /** A command the agent "runs" there (argv, no shell), after the writes. */
  run: z.array(z.string()).min(1).optional(),
});

/** A script's `error:` entries and the failure each one plays. */
export const SCRIPTED_ERRORS = {
  rate_limit: 'rate_limited',
  auth: 'auth',
  timeout: 'timeout',
  overloaded: 'overloaded',
  network: 'network',
  context_overflow: 'context_overflow',
  crash: 'crashed',
} as const satisfies Record<string, RuntimeErrorKind>;

const ErrorEntry = z.strictObject({
  ...conditions,
  error: z.enum(Object.keys(SCRIPTED_ERRORS) as [keyof typeof SCRIPTED_ERRORS]),
  reset_after_s: z.number().nonnegative().optional(),
  delay_ms: z.number().int().nonnegative().optional(),
});

const AgentEntry = z.union([z.string(), ReplyEntry, ErrorEntry]);

const GateEntry = z.union([
  z.enum(['approved', 'rejected']),
  z.strictObject({
    /** A regex on the gate's prompt (which holds the output it judges). */
    when: z.string().optional(),
    decision: z.enum(['approved', 'rejected']),
    reason: z.string().optional(),
  }),
]);

const HumanEntry = z.union([z.string(), z.number(), z.boolean()]).transform(String);

export const ScriptSchema = z.strictObject({
  agents: z.record(z.string(), z.array(AgentEntry)).default({}),
  gates: z.record(z.string(), z.array(GateEntry)).default({}),
  human: z.record(z.string(), z.array(HumanEntry)).default({}),
});

export type Script = z.infer<typeof ScriptSchema>;
export type ScriptAgentEntry = z.infer<typeof AgentEntry>;
export type ScriptGateEntry = z.infer<typeof GateEntry>;
