/** The commands a person types to decide a gate waiting on task `taskId`, as every message shows them. */
export function verdictCommands(taskId: string): { approve: string; reject: string } {
  return { approve: `troupe approve ${taskId}`, reject: `troupe reject ${taskId} -r "<reason>"` };
}
