import { takingTurns } from './turns.js';

/**
 * Worktrees of one repository are registered one at a time in this process: `git worktree add`
 * run eight times at once in one repository fails now and then (exit 128 after "Preparing
 * worktree", with no reason given), and a task must not fail for starting beside another. Only
 * what changes the registrations (add, move, remove, prune) takes turns, keyed by the repository;
 * what they read is read side by side, and a new worktree's files are checked out after its turn
 * (each worktree has its own index).
 */
export const registrationTurn = takingTurns();
