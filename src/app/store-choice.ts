/**
 * The store named by `--store` for this process. Kept here rather than in TROUPE_STORE so that it
 * is not passed on to the agents' CLIs in their environment (its URL may hold a password); a
 * module of its own so that main.ts can set it without loading the project's modules.
 */
let chosen: string | undefined;

export function chooseStore(store: string): void {
  chosen = store;
}

export function chosenStore(): string | undefined {
  return chosen;
}
