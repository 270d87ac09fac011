/** What load() returns: the figures the serve benches read. */
export type LoadResult = {errors: number; latency: {p50: number; p99: number}; non2xx: number; requests: {average: number; total: number}}

export function load(options: {
  amount?: number
  connections: number
  duration?: number
  headers: Record<string, string>
  method?: string
  nextBody: () => string
  path: string
  url: string
}): Promise<LoadResult>
