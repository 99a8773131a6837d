import type { OrchestratorEvent } from './orchestrator.js';

/**
 * Cline Kanban's runtime stream (`ws://127.0.0.1:3484/api/runtime/ws`), as AMQ's experimental
 * `integration kanban bridge` reads it: `snapshot` and `workspace_state_updated` say which cards
 * (tasks, with their prompt and column) there are; `task_sessions_updated` carries each task
 * session's state (idle, running, awaiting_review, failed, interrupted); `task_ready_for_review`
 * a review handoff. Only a session's state changing to running, failed / interrupted (blocking)
 * or awaiting_review (handoff, once until it leaves that state) becomes a message.
 */

interface Session {
  taskId?: string;
  state?: string;
  agentId?: string | null;
  workspacePath?: string | null;
  reviewReason?: string | null;
}

interface WorkspaceState {
  repoPath?: string;
  board?: { columns?: Array<{ id?: string; cards?: Array<{ id?: string; prompt?: string }> }> };
  sessions?: Record<string, Session>;
}

interface Card {
  prompt: string;
  column: string;
  workspaceId: string;
  workspacePath: string;
}

export class KanbanState {
  private cards = new Map<string, Card>();
  private sessions = new Map<string, string>();
  private handedOff = new Set<string>();

  /** One runtime message (a parsed JSON frame): the notifications it makes. */
  apply(message: unknown): OrchestratorEvent[] {
    if (typeof message !== 'object' || message === null) return [];
    const m = message as Record<string, unknown>;
    switch (m.type) {
      case 'snapshot': {
        this.cards.clear();
        this.sessions.clear();
        this.handedOff.clear();
        const ws = m.workspaceState as WorkspaceState | undefined;
        this.refresh(String(m.currentProjectId ?? ''), ws);
        for (const [id, s] of Object.entries(ws?.sessions ?? {}))
          this.sessions.set(s.taskId || id, s.state ?? '');
        return [];
      }
      case 'workspace_state_updated':
        this.refresh(String(m.workspaceId ?? ''), m.workspaceState as WorkspaceState | undefined);
        return [];
      case 'task_sessions_updated':
        return this.sessionsUpdated(
          String(m.workspaceId ?? ''),
          (m.summaries as Session[] | undefined) ?? [],
        );
      case 'task_ready_for_review': {
        const taskId = String(m.taskId ?? '');
        if (!taskId || this.handedOff.has(taskId)) return [];
        this.handedOff.add(taskId);
        return [
          this.note('task_ready_for_review', String(m.workspaceId ?? ''), {
            taskId,
            state: 'awaiting_review',
          }),
        ];
      }
      default:
        return [];
    }
  }

  private refresh(workspaceId: string, ws: WorkspaceState | undefined): void {
    if (!ws) return;
    for (const [id, card] of this.cards) if (card.workspaceId === workspaceId) this.cards.delete(id);
    for (const column of ws.board?.columns ?? []) {
      for (const card of column.cards ?? []) {
        if (!card.id) continue;
        this.cards.set(card.id, {
          prompt: card.prompt ?? '',
          column: column.id ?? '',
          workspaceId,
          workspacePath: ws.repoPath ?? '',
        });
      }
    }
  }

  private sessionsUpdated(workspaceId: string, summaries: Session[]): OrchestratorEvent[] {
    const notes: OrchestratorEvent[] = [];
    for (const raw of summaries) {
      if (!raw.taskId) continue;
      const s = { ...raw, taskId: raw.taskId };
      const state = s.state ?? '';
      const before = this.sessions.get(s.taskId);
      if (state !== 'awaiting_review') this.handedOff.delete(s.taskId);
      if (before !== state) {
        if (state === 'running' || state === 'failed' || state === 'interrupted') {
          notes.push(this.note('task_sessions_updated', workspaceId, s));
        } else if (state === 'awaiting_review' && !this.handedOff.has(s.taskId)) {
          this.handedOff.add(s.taskId);
          notes.push(this.note('task_sessions_updated', workspaceId, s));
        }
      }
      this.sessions.set(s.taskId, state);
    }
    return notes;
  }

  private note(event: string, workspaceId: string, s: Session & { taskId: string }): OrchestratorEvent {
    const card = this.cards.get(s.taskId);
    const state = s.state ?? '';
    const path = s.workspacePath || card?.workspacePath || '';
    const task: OrchestratorEvent['task'] = { id: s.taskId };
    if (card?.prompt) task.prompt = card.prompt;
    if (card?.column) task.column = card.column;
    if (state) task.state = state;
    if (s.reviewReason) task.review_reason = s.reviewReason;
    if (s.agentId) task.agent_id = s.agentId;
    const workspace: Record<string, string> = {};
    if (workspaceId || card?.workspaceId) workspace.id = workspaceId || card!.workspaceId;
    if (path) workspace.path = path;
    const title = card?.prompt?.trim() ? card.prompt : s.taskId;
    const flag = state === 'awaiting_review' ? 'handoff' : state === 'running' ? undefined : 'blocking';
    const subject =
      state === 'awaiting_review'
        ? `review: ${title}`
        : ['running', 'failed', 'interrupted'].includes(state)
          ? `${state}: ${title}`
          : `${event}: ${title}`;
    const lines = [`Event: ${event}`, `Task: ${s.taskId}`];
    if (card?.prompt) lines.push(`Prompt: ${card.prompt}`);
    if (state) lines.push(`State: ${state}`);
    if (card?.column) lines.push(`Column: ${card.column}`);
    if (s.reviewReason) lines.push(`Review Reason: ${s.reviewReason}`);
    if (s.agentId) lines.push(`Agent: ${s.agentId}`);
    if (workspace.id) lines.push(`Workspace ID: ${workspace.id}`);
    if (path) lines.push(`Workspace Path: ${path}`);
    return {
      name: 'kanban',
      transport: 'bridge',
      event,
      ...(Object.keys(workspace).length ? { workspace } : {}),
      task,
      ...(state ? { state } : {}),
      ...(flag ? { flag } : {}),
      subject: `[kanban] ${subject}`,
      body: `${lines.join('\n')}\n`,
      kind: state === 'running' ? 'status' : 'todo',
      priority: state === 'running' ? 'low' : 'normal',
    };
  }
}
