import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// What a new operator or developer reads first says what they need to know before they stumble: the
// README's Tests section (how long, what outside programs the suite uses, what it does to a given Redis)
// and docs/operations.md's setup (the database exists before it is migrated).

const ROOT = path.resolve(import.meta.dirname, '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const section = (text: string, heading: string) => {
  const start = text.indexOf(`\n${heading}\n`);
  const level = heading.split(' ')[0] as string;
  const end = text.indexOf(`\n${level} `, start + heading.length + 2);
  return start < 0 ? '' : text.slice(start, end < 0 ? undefined : end);
};
const tests = section(read('README.md'), '## Tests');

describe("the README's Tests section", () => {
  it('says roughly how long the suite takes', () => {
    expect(tests).toMatch(/`npm test` takes about \d+ minutes/);
    expect(tests).toMatch(/PostgreSQL and Redis about/);
  });

  it('names the browser the browser test drives, how to install it, and what happens without it', () => {
    const browser = read('test/docs.browser.test.ts').match(/const CHROMIUM = '([^']+)'/)?.[1];
    expect(browser).toBeDefined();
    expect(tests).toContain(`\`${browser}\``);
    expect(tests).toContain('apt-get install chromium');
    expect(tests).toMatch(/Without it the\s+file's tests are reported skipped/);
  });

  it('says what the suite does to the Redis of TEST_REDIS_URL, with the key prefix the tests use', () => {
    const prefixes = new Set(
      [...read('test/ratelimit.script.test.ts').matchAll(/`(partner-api-test):/g)].map((match) => match[1]),
    );
    expect([...prefixes]).toEqual(['partner-api-test']);
    expect(tests).toContain('`partner-api-test:`');
    expect(tests).toMatch(/never flushes/);
  });
});

describe('docs/operations.md', () => {
  it('creates the database in every example that migrates one', () => {
    const blocks = [...read('docs/operations.md').matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
    const migrating = blocks.filter((block) => block.includes('npm run db:migrate'));
    expect(migrating.length).toBeGreaterThan(0);
    for (const block of migrating) {
      const created = block.search(/\bcreatedb\b|CREATE DATABASE/);
      expect(created, block).toBeGreaterThanOrEqual(0);
      expect(created, block).toBeLessThan(block.indexOf('npm run db:migrate'));
    }
  });
});
