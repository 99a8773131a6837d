import { appendFileSync, statSync } from 'node:fs';
import { openCallStore, recordedDirectives } from '../app/troupe-mcp.js';
import { projectMail } from '../bus/task-mail.js';
import { NotFoundError, UsageError } from '../core/errors.js';
import type { EventStore } from '../core/event-store.js';
import {
  decodeMcpCall,
  MCP_CALL_FILE_MAX_BYTES,
  type McpDirective,
  mcpDirectiveLine,
  TROUPE_MCP_ENV,
  type TroupeMcpCall,
} from '../core/mcp-call.js';
import type { TaskMail } from '../core/task-mail.js';
import { foldEvents, type TaskState } from '../engine/fold/task-state.js';

/**
 * What one runtime call's server works on: who is calling (the identity the executor gave it),
 * the task as the store has it now (read only: the executor owns the task while its stage
 * runs), the project's bus, and the call's file of recorded directives.
 */
export class CallSession {
  private store: EventStore | null = null;
  private mailbox: TaskMail | null = null;

  constructor(
    readonly root: string,
    readonly callsFile: string,
    readonly call: TroupeMcpCall,
    /** The project's store as the executor named it (app/troupe-mcp.ts). */
    private readonly storeLocation: string,
  ) {}

  static fromEnv(env: NodeJS.ProcessEnv): CallSession {
    const missing = Object.values(TROUPE_MCP_ENV).filter((name) => !env[name]);
    if (missing.length > 0)
      throw new UsageError(`${missing.join(', ')} not set`, {
        hint: 'troupe starts this server itself for agents with `mcp: [troupe]` (docs/mcp.md)',
      });
    const call = decodeMcpCall(env[TROUPE_MCP_ENV.call]!);
    if (!call)
      throw new UsageError(`${TROUPE_MCP_ENV.call} is not a call troupe made: ${env[TROUPE_MCP_ENV.call]}`);
    return new CallSession(
      env[TROUPE_MCP_ENV.root]!,
      env[TROUPE_MCP_ENV.calls]!,
      call,
      env[TROUPE_MCP_ENV.store]!,
    );
  }

  /** The task now: every event appended so far, folded. */
  state(): TaskState {
    this.store ??= openCallStore(this.storeLocation);
    const events = [...this.store.events(this.call.taskId)];
    if (events.length === 0) throw new NotFoundError(`no task ${this.call.taskId}`);
    return foldEvents(events);
  }

  mail(): TaskMail {
    this.mailbox ??= projectMail(this.root, () => this.state().definition.agents.map((a) => a.id));
    return this.mailbox;
  }

  /** What this call recorded so far. */
  recorded(): McpDirective[] {
    return recordedDirectives(this.callsFile);
  }

  record(directive: McpDirective): void {
    const line = mcpDirectiveLine(directive);
    const size = statSync(this.callsFile, { throwIfNoEntry: false })?.size ?? 0;
    if (size + Buffer.byteLength(line) > MCP_CALL_FILE_MAX_BYTES)
      throw new UsageError(
        `this call has recorded ${size} bytes of tool calls; at most ${MCP_CALL_FILE_MAX_BYTES} are kept`,
      );
    appendFileSync(this.callsFile, line);
  }

  close(): void {
    this.store?.close();
  }
}
