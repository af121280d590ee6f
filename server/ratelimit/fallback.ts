import type { Logger } from '../logger';
import type { RateLimitDecision, RateLimiter } from './limiter';

/**
 * D-14: the shared store is asked first, for at most `timeoutMs`; when it is slow or unreachable the call
 * is judged by the in-process limiter of the same policy (each instance still enforces the limit on its
 * own), and the failure is logged, once per outage at warn and each time at debug. The answer is always a
 * real decision of one of the two, so the headers never advertise made-up numbers.
 */
export class FallbackLimiter implements RateLimiter {
  private degraded = false;

  constructor(
    private readonly shared: RateLimiter,
    private readonly local: RateLimiter,
    private readonly log: Logger,
    private readonly timeoutMs = 250,
  ) {}

  async limit(identifier: string): Promise<RateLimitDecision> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`rate-limit store slower than ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    try {
      const decision = await Promise.race([this.shared.limit(identifier), timeout]);
      if (this.degraded) {
        this.degraded = false;
        this.log.info('rate-limit store answering again');
      }
      return decision;
    } catch (error) {
      if (!this.degraded) {
        this.degraded = true;
        this.log.warn('rate-limit store unavailable; limiting in process', { error });
      } else {
        this.log.debug('rate-limit store still unavailable', { error });
      }
      return this.local.limit(identifier);
    } finally {
      clearTimeout(timer);
    }
  }
}
