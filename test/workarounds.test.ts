import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { withoutStaleRows } from '../db/workarounds/postgres-js-stale-rows';

// Every workaround for a third-party defect lives in a workarounds/ folder, one module a defect:
// db/workarounds/ and server/http/workarounds/. Each names the dependency version it was written for. When an
// upgrade moves the installed version, its test here fails: whoever upgrades checks whether the defect is
// fixed (each module says how), then removes the workaround or moves its version forward.
const root = path.resolve(import.meta.dirname, '..');
const modules = ['db/workarounds', 'server/http/workarounds'].flatMap((folder) =>
  readdirSync(path.join(root, folder))
    .filter((name) => name.endsWith('.ts'))
    .map((name) => `${folder}/${name}`),
);

function installedVersion(dependency: string): string {
  const manifest = path.join(root, 'node_modules', dependency, 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

describe('workarounds for third-party defects', () => {
  it('are there to check', () => {
    expect(modules.length).toBeGreaterThan(0);
  });

  for (const name of modules) {
    it(`${name} was written for the installed version of its dependency`, async () => {
      const { writtenFor } = (await import(path.join(root, name))) as {
        writtenFor?: { dependency: string; version: string };
      };
      expect(writtenFor, 'a workaround module exports writtenFor').toBeDefined();
      if (!writtenFor) return;
      expect(
        installedVersion(writtenFor.dependency),
        `${writtenFor.dependency} moved: check whether ${name} is still needed`,
      ).toBe(writtenFor.version);
    });
  }
});

describe('postgres.js stale rows (porsager/postgres#1119)', () => {
  it("keep a result's last `count` rows: the leading empty slots are another statement's", () => {
    const stale = Object.assign([undefined, undefined, { x: 1 }, { x: 2 }], { count: 2 });
    expect([...withoutStaleRows(stale)]).toEqual([{ x: 1 }, { x: 2 }]);
    const own = Object.assign([{ x: 1 }], { count: 1 });
    expect(withoutStaleRows(own)).toBe(own);
    expect([...withoutStaleRows(own)]).toEqual([{ x: 1 }]);
  });
});
