import { takingTurns } from './turns.js';

/**
 * Worktrees of one repository are registered one at a time in this process, and listed in turn
 * with that: git writes a new worktree's files under `.git/worktrees/` one after another, and a
 * command that reads them all meanwhile (`worktree add`, `list`, `unlock`, `branch -D`) stops
 * with "failed to read …/commondir" (exit 128), and a task must not fail for starting beside
 * another. What changes or lists the registrations takes turns, keyed by the repository; a new
 * worktree's files are checked out after its turn, side by side (each worktree has its own index).
 */
export const registrationTurn = takingTurns();
