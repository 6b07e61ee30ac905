// Minimal types for the parts of autocannon 9 the benchmarks use (the package ships none).
declare module 'autocannon' {
  interface Histogram {
    average: number;
    p50: number;
    p99: number;
    total: number;
    sent: number;
  }
  interface Result {
    requests: Histogram;
    latency: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    statusCodeStats: Record<string, { count: number }>;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    /** Requests per second across all connections (a paced load). */
    overallRate?: number;
    requests?: Array<{
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      /** Called before each send of this request: may return it changed (a fresh URL). */
      setupRequest?: (req: { method?: string; path?: string; headers?: Record<string, string> }) => { method?: string; path?: string; headers?: Record<string, string> };
    }>;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
