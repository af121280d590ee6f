import { randomUUID } from 'node:crypto';

/** The parts of a W3C Trace Context `traceparent` header (version 00 layout). */
export type TraceParent = { traceId: string; parentId: string; flags: number };

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_PARENT = '0'.repeat(16);

/**
 * The caller's trace, if its `traceparent` is valid per W3C Trace Context (D-22): lowercase hex, version
 * `ff` forbidden, version 00 exactly 55 characters, a later version may append fields after a dash (read
 * as 00), trace and parent ids not all zeros. Anything else is ignored and the request starts a new trace.
 */
export function parseTraceparent(header: string | undefined): TraceParent | undefined {
  if (!header || header.length < 55 || header.length > 512) return undefined;
  const match = TRACEPARENT.exec(header);
  if (!match) return undefined;
  const [, version, traceId, parentId, flags, rest] = match;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (!traceId || !parentId || !flags || traceId === ZERO_TRACE || parentId === ZERO_PARENT) return undefined;
  return { traceId, parentId, flags: Number.parseInt(flags, 16) };
}

/** A new trace id: 16 random bytes as 32 lowercase hex characters (a UUIDv4's, never all zeros). */
export function newTraceId(): string {
  return randomUUID().replaceAll('-', '');
}
