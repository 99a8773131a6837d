/**
 * Work that must not overlap, per key, within this process: each call for a key starts when the
 * one before it has settled (failed or not). Keys with nothing queued are forgotten.
 */
export function takingTurns(): <T>(key: string, work: () => Promise<T>) => Promise<T> {
  const turns = new Map<string, Promise<unknown>>();
  return (key, work) => {
    const mine = (turns.get(key) ?? Promise.resolve()).then(work, work);
    const settled = mine.catch(() => {});
    turns.set(key, settled);
    void settled.then(() => {
      if (turns.get(key) === settled) turns.delete(key);
    });
    return mine;
  };
}
