import { describe, expect, it } from 'vitest';
import { inlineParams, markdownTable, sqlLiteral } from '../bench/lib';
import { dueAt, quantile } from '../bench/paced';

// pgbench runs the API's exact SQL with its parameters written in (bench/http.ts): a wrong literal would
// benchmark another query.
describe('bench helpers', () => {
  it('writes each parameter as the literal PostgreSQL reads back to the same value', () => {
    expect(sqlLiteral("it's")).toBe("'it''s'");
    expect(sqlLiteral('back\\slash %')).toBe("'back\\slash %'");
    expect(sqlLiteral(42)).toBe('42');
    expect(sqlLiteral(false)).toBe('false');
    expect(sqlLiteral(null)).toBe('NULL');
    expect(sqlLiteral(new Date('2026-01-02T03:04:05Z'))).toBe("'2026-01-02T03:04:05.000Z'");
  });

  it('replaces $10 as the tenth parameter, not $1 followed by 0', () => {
    const params = Array.from({ length: 10 }, (_, i) => i + 1);
    expect(inlineParams('select $1, $10, $2', params)).toBe('select 1, 10, 2');
    expect(() => inlineParams('select $2', [1])).toThrow('no value for $2');
  });

  it('prints a markdown table with the first row’s keys as header', () => {
    expect(markdownTable([{ a: 1, b: 'x' }, { a: 2 }])).toBe('| a | b |\n|---|---|\n| 1 | x |\n| 2 |  |');
  });

  it('spaces the calls of a fixed rate evenly, and reads quantiles by nearest rank', () => {
    // bench/paced.ts: 300 req/s is a call every 3.33 ms, never 16 at the start of each second.
    expect([0, 1, 2, 300].map((i) => dueAt(i, 300))).toEqual([0, 1000 / 300, 2000 / 300, 1000]);
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(quantile(sorted, 0.5)).toBe(50);
    expect(quantile(sorted, 0.99)).toBe(99);
    expect(quantile([7], 0.99)).toBe(7);
    expect(quantile([], 0.5)).toBe(Number.POSITIVE_INFINITY);
  });
});
