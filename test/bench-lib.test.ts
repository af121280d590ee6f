import { describe, expect, it } from 'vitest';
import { inlineParams, markdownTable, sqlLiteral } from '../bench/lib';

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
});
