import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inlineParams, markdownTable, sqlLiteral } from '../bench/lib';
import { dueAt, quantile } from '../bench/paced';
import { alternate, assertSameAnswer } from '../bench/reference';
import { statementShape } from '../bench/reference-service';

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

  it('alternates the peers round by round and keeps the best rate and the least CPU per call of each', async () => {
    const order: string[] = [];
    const runs = { api: [100, 300, 200], reference: [500, 400, 600] };
    const cpus = { api: [0.9, 1.1, 0.8], reference: [0.3, 0.2, 0.4] };
    const peer = (name: 'api' | 'reference') => async () => {
      const round = order.filter((seen) => seen === name).length;
      order.push(name);
      return { max: { reqPerSec: runs[name][round] ?? 0 }, cpu: { serverMs: cpus[name][round] ?? 0 } };
    };
    const best = await alternate(3, { api: peer('api'), reference: peer('reference') });
    expect(order).toEqual(['api', 'reference', 'api', 'reference', 'api', 'reference']);
    expect(best).toEqual({
      api: { max: { reqPerSec: 300 }, cpu: { serverMs: 0.8 } },
      reference: { max: { reqPerSec: 600 }, cpu: { serverMs: 0.2 } },
    });
  });

  it('refuses a reference that answers otherwise than the API; key order and spacing aside', () => {
    expect(() => assertSameAnswer('list', '{"a":1,"b":[2]}', '{ "b": [2], "a": 1 }')).not.toThrow();
    expect(() => assertSameAnswer('list', '{"a":1}', '{"a":"1"}')).toThrow('the reference answers otherwise');
  });

  it("picks the reference's statement by its filters whatever their order, its page size, its offset and its keyword's class", () => {
    expect(statementShape(['to', 'from', 'platform'], 21, false)).toBe(
      statementShape(['platform', 'from', 'to'], 21, false),
    );
    expect(statementShape([], 21, false)).not.toBe(statementShape([], 101, false));
    expect(statementShape([], 101, true)).not.toBe(statementShape([], 101, false));
    // A short keyword's statement binds two more values than a long one's (the brand and the keyword).
    expect(statementShape(['keyword'], 21, false, '짜요')).not.toBe(statementShape(['keyword'], 21, false, '맛있어'));
    expect(statementShape(['keyword'], 21, false, '맛있어')).toBe(statementShape(['keyword'], 21, false, 'crisp'));
  });
});

// Raw results are a run's, not the repository's: BENCHMARKS.md carries the figures it cites.
describe('raw benchmark results', () => {
  const root = path.resolve(import.meta.dirname, '..');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' });
  /** The folders the benches write results to: each `…results… = path.resolve(import.meta.dirname, 'x')`. */
  const folders = [
    ...new Set(
      readdirSync(path.join(root, 'bench'))
        .filter((file) => file.endsWith('.ts'))
        .flatMap((file) =>
          [
            ...readFileSync(path.join(root, 'bench', file), 'utf8').matchAll(
              /results\w*\s*=\s*path\.resolve\(import\.meta\.dirname,\s*'([^']+)'\)/gi,
            ),
          ].map((match) => `bench/${match[1]}`),
        ),
    ),
  ];

  it('are written under folders git ignores, and none is committed', () => {
    expect(folders).toEqual(['bench/results']);
    for (const folder of folders) {
      expect(git('check-ignore', '--no-index', `${folder}/run.json`).trim()).toBe(`${folder}/run.json`);
      expect(git('ls-files', folder).trim()).toBe('');
    }
  });

  it('are not what BENCHMARKS.md cites: it names no result file', () => {
    const page = readFileSync(path.join(root, 'BENCHMARKS.md'), 'utf8');
    expect(page.match(/[\w*.-]+\.json\b/g) ?? []).toEqual([]);
  });
});
