import { cmuxType, ghosttyType } from './emulators.js';
import type { Tmux } from './tmux.js';

/** Where a wake types its notices: the agent's tmux pane, cmux surface or Ghostty terminal. */
export interface NoticeSink {
  /** For the wake's log line: `tmux pane %3`, `cmux surface surface:7`, … */
  readonly describe: string;
  /** Types the line and Enter; throws when the terminal is gone (the wake then ends). */
  type(text: string): void;
  /** Whether the terminal is still there; a terminal app that cannot tell says true. */
  alive(): boolean;
}

export function tmuxSink(tmux: Tmux, pane: string): NoticeSink {
  const serverPid = tmux.serverPid();
  return {
    describe: `tmux pane ${pane}`,
    type: (text) => tmux.type(pane, text),
    alive: () => tmux.paneAlive(pane, serverPid),
  };
}

/**
 * The terminal app the wake runs in, from what it set in the environment: cmux's
 * `CMUX_SURFACE_ID`, or `TROUPE_GHOSTTY_TERMINAL` (typed by `launch --launcher ghostty` before
 * the agent's line). Only ids of a plain shape are taken: they go to the app as an argument.
 */
export function emulatorSink(env: NodeJS.ProcessEnv): NoticeSink | undefined {
  const plain = (id: string | undefined) => (id && /^[\w:.-]{1,128}$/.test(id) ? id : undefined);
  const surface = plain(env.CMUX_SURFACE_ID);
  if (surface)
    return {
      describe: `cmux surface ${surface}`,
      type: (text) => cmuxType(surface, text, env),
      alive: () => true,
    };
  const terminal = plain(env.TROUPE_GHOSTTY_TERMINAL);
  if (terminal)
    return {
      describe: `Ghostty terminal ${terminal}`,
      type: (text) => ghosttyType(terminal, text, env),
      alive: () => true,
    };
  return undefined;
}
