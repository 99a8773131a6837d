import { activationOf } from './activations.js';
import type { Reducers } from './types.js';

/**
 * A mailbox agent's stage (runtime mailbox): it stays `running` while it waits for its reply on
 * the bus, marked by `activation.mailbox`, so a resumed process does not take it for a stage cut
 * off by a crash; the reply, once taken, is the stage's output.
 */
export const mailboxReducers = {
  mailbox_asked(state, event) {
    activationOf(state, event.activation).mailbox = {
      stage: event.stage,
      handle: event.handle,
      thread: event.thread,
      askedAt: event.at,
      deadline: event.deadline,
      reply: null,
    };
  },

  mailbox_replied(state, event) {
    const wait = activationOf(state, event.activation).mailbox;
    if (wait && wait.stage === event.stage) wait.reply = { from: event.from, body: event.body };
  },

  mail_failed(state, event) {
    state.mailFailures.push({
      to: event.to,
      kind: event.kind,
      subject: event.subject,
      reason: event.reason,
      at: event.at,
    });
  },
} satisfies Partial<Reducers>;
