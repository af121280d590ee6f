import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Target } from './target';

// One HTTP attempt at a delivery (D-28): a POST to the address that was checked (never a second DNS
// answer), redirects not followed, a bounded time, and at most 1 KB of the receiver's answer kept.
// Attempts to one receiver share keep-alive connections (ReceiverConnections): a burst of events costs
// the receiver and this instance one connection (and one TLS handshake) per concurrent attempt, not one each.

/** What the partner sees of an attempt: the error column holds at most this many bytes. */
export const EXCERPT_BYTES = 1024;

export type AttemptOutcome = {
  /** The receiver's status; null when no answer came. */
  statusCode: number | null;
  /** Why it failed, or null on a 2xx. */
  error: string | null;
  durationMs: number;
  /** The receiver's Retry-After, when it gave one (seconds or a date). */
  retryAfterMs: number | undefined;
};

/** A receiver's time per attempt (D-28). */
export const ATTEMPT_TIMEOUT_MS = 15_000;

export async function postDelivery(
  target: Target,
  headers: Record<string, string>,
  body: string,
  {
    timeoutMs,
    signal,
    agent,
  }: {
    timeoutMs: number;
    signal: AbortSignal;
    /** Keep-alive connections to this target's address (ReceiverConnections); a connection of its own without. */
    agent?: http.Agent;
  },
): Promise<AttemptOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  // The connection goes to the checked address; the URL's name stays the Host header and the TLS server name.
  const lookup: LookupFunction = (_host, options, callback) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const bounded = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
  const client = target.url.protocol === 'https:' ? https : http;
  const post = () =>
    new Promise<{ status: number; text: string; retryAfter: string | undefined }>((resolve, reject) => {
      const request = client.request(
        target.url,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': 'partner-reporting-api-webhooks', ...headers },
          lookup,
          signal: bounded,
          agent: agent ?? false,
        },
        (response) => {
          const kept: Buffer[] = [];
          let size = 0;
          const settle = () =>
            resolve({
              status: response.statusCode ?? 0,
              text: Buffer.concat(kept).toString('utf8'),
              retryAfter: response.headers['retry-after'],
            });
          response.on('data', (chunk: Buffer) => {
            if (size < EXCERPT_BYTES) kept.push(chunk.subarray(0, EXCERPT_BYTES - size));
            size += chunk.length;
            // Past the excerpt nothing more is read: the rest of a large answer is not waited for.
            if (size >= EXCERPT_BYTES) {
              response.destroy();
              settle();
            }
          });
          response.on('end', settle);
          response.on('error', reject);
        },
      );
      request.on('error', (error: NodeJS.ErrnoException) => {
        // A kept connection the receiver closed while idle fails before it answers: sent again on a new one.
        reject(request.reusedSocket && error.code === 'ECONNRESET' ? new ClosedWhileIdle(error.message) : error);
      });
      request.end(body);
    });
  try {
    const answer = await post().catch((error: unknown) => {
      if (error instanceof ClosedWhileIdle) return post();
      throw error;
    });
    const ok = answer.status >= 200 && answer.status < 300;
    return {
      statusCode: answer.status,
      error: ok ? null : excerpt(`HTTP ${answer.status}${answer.text ? `: ${answer.text}` : ''}`),
      durationMs: elapsed(),
      retryAfterMs: retryAfterMs(answer.retryAfter),
    };
  } catch (error) {
    const timedOut = bounded.aborted && !signal.aborted;
    const reason = timedOut
      ? `no answer within ${timeoutMs / 1000} s`
      : error instanceof Error
        ? `${(error as NodeJS.ErrnoException).code ?? error.name}: ${error.message}`
        : String(error);
    return { statusCode: null, error: excerpt(reason), durationMs: elapsed(), retryAfterMs: undefined };
  }
}

/** A kept connection reset before any answer: the request never reached the receiver's handler. */
class ClosedWhileIdle extends Error {}

/** A kept connection is closed after this long idle: under the 5 s a Node receiver keeps one by default. */
const IDLE_MS = 4_000;

/**
 * Keep-alive connections of one worker, a pool per receiver (the URL's origin) connected to the address
 * last checked for it. When the name resolves to another address a new pool starts; the old one's
 * connections finish their attempts and close once idle, so no connection ever goes to an address not checked.
 */
export class ReceiverConnections {
  private readonly pools = new Map<string, { address: string; agent: http.Agent }>();

  agentFor(target: Target): http.Agent {
    const origin = target.url.origin;
    const pool = this.pools.get(origin);
    if (pool?.address === target.address) return pool.agent;
    const options = { keepAlive: true, timeout: IDLE_MS };
    const agent = target.url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    this.pools.set(origin, { address: target.address, agent });
    return agent;
  }

  /** Closes every connection, those of attempts under way too (a worker stopping has cut them short). */
  close(): void {
    for (const { agent } of this.pools.values()) agent.destroy();
    this.pools.clear();
  }
}

/**
 * The text cut to EXCERPT_BYTES of UTF-8, never inside a character. A NUL, which PostgreSQL's text cannot
 * hold (the attempt could not be recorded), shows as U+FFFD, as a byte that is not UTF-8 does.
 */
export function excerpt(text: string): string {
  let cut = text.replaceAll('\u0000', '\uFFFD');
  while (Buffer.byteLength(cut) > EXCERPT_BYTES) cut = cut.slice(0, Math.max(0, cut.length - 16));
  return cut;
}

function retryAfterMs(value: string | undefined): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}
