export function crashMessage(run: number, j: number): Buffer;
