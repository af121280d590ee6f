import http from 'node:http';

// Latency at a fixed rate, open loop (targets of the form "p99 ≤ N ms at R req/s"). autocannon's `overallRate` is a
// per-connection quota per second: at each second's start every connection sends back to back until its
// share is used, then waits for the next second. At 300 req/s over 16 connections that is a burst of 16
// concurrent calls for the first few hundred milliseconds of every second, so its "latency at 300 req/s"
// is the latency of a saturated server at concurrency 16. Here the calls are spaced evenly (one every
// 1/rate s) over the same 16 keep-alive connections, and each call's latency is counted from the moment
// it was due, not from when a connection was free: a server that falls behind shows the queue it causes
// (no coordinated omission).

export type PacedResult = {
  /** Calls due in the run, and those answered in time (any status). */
  due: number;
  answered: number;
  non2xx: number;
  errors: number;
  /** Milliseconds from due to fully read, over the answered calls; Infinity when none was. */
  p50: number;
  p99: number;
  max: number;
};

/** The q-quantile (0..1) of ascending `sorted`, nearest rank; Infinity for none. */
export function quantile(sorted: readonly number[], q: number): number {
  if (!sorted.length) return Number.POSITIVE_INFINITY;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] as number;
}

/** When the i-th call of a run at `rate` per second is due, in ms after the start. */
export function dueAt(i: number, rate: number): number {
  return (i * 1000) / rate;
}

/** One answered call: its index, when it was due and how long from then until fully read (ms), its status. */
export type PacedCall = { i: number; due: number; ms: number; status: number };

/**
 * `url` is one URL, or the i-th call's URL (a mixed load); `onAnswer` sees every answered call (per-second
 * figures).
 */
export async function paced(
  url: string | ((i: number) => string),
  options: {
    rate: number;
    durationS: number;
    connections: number;
    headers: Record<string, string>;
    timeoutMs?: number;
    onAnswer?: (call: PacedCall) => void;
  },
): Promise<PacedResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const urlOf = typeof url === 'string' ? () => url : url;
  const total = Math.floor(options.rate * options.durationS);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const latencies: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let settled = 0;
  const start = performance.now();

  const send = (i: number, due: number) =>
    new Promise<void>((resolve) => {
      const target = new URL(urlOf(i));
      const request = http.get(
        {
          host: target.hostname,
          port: target.port,
          path: `${target.pathname}${target.search}`,
          agent,
          headers: options.headers,
        },
        (response) => {
          response.on('data', () => {});
          response.on('end', () => {
            const ms = performance.now() - start - due;
            latencies.push(ms);
            options.onAnswer?.({ i, due, ms, status: response.statusCode ?? 0 });
            if ((response.statusCode ?? 0) < 200 || (response.statusCode ?? 0) >= 300) non2xx += 1;
            resolve();
          });
          response.on('error', () => {
            errors += 1;
            resolve();
          });
        },
      );
      request.setTimeout(timeoutMs, () => request.destroy(new Error('timeout')));
      request.on('error', () => {
        errors += 1;
        resolve();
      });
    });

  await new Promise<void>((resolve) => {
    let next = 0;
    const tick = () => {
      const elapsed = performance.now() - start;
      // Every call due by now goes out now; a late tick sends its backlog at once, still counted from due.
      while (next < total && dueAt(next, options.rate) <= elapsed) {
        send(next, dueAt(next, options.rate)).then(() => {
          settled += 1;
          if (settled === total) resolve();
        });
        next += 1;
      }
      if (next < total) setTimeout(tick, Math.max(0, dueAt(next, options.rate) - elapsed));
    };
    if (total === 0) resolve();
    else tick();
  });
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const round = (ms: number) => Math.round(ms * 10) / 10;
  return {
    due: total,
    answered: latencies.length,
    non2xx,
    errors,
    p50: round(quantile(latencies, 0.5)),
    p99: round(quantile(latencies, 0.99)),
    max: round(latencies.at(-1) ?? Number.POSITIVE_INFINITY),
  };
}
