export interface BuildStep {
  name: string;
  script: string;
  args: string[];
}

export const buildSteps: BuildStep[];

export function runSteps(
  steps: BuildStep[],
  options?: {
    cwd?: string;
    verbose?: boolean;
    out?: { write(text: string): unknown };
    err?: { write(text: string): unknown };
  },
): Promise<number>;
