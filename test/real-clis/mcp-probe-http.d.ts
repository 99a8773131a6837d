export const PROBE_WORD: string;
export interface HttpProbe {
  url: string;
  calls: Array<{
    method: string;
    params?: Record<string, unknown>;
    headers: Record<string, string | string[] | undefined>;
  }>;
  close(): Promise<void>;
}
export function startHttpProbe(): Promise<HttpProbe>;
