import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// Every workaround for a third-party defect lives in db/workarounds/, one module a defect, and names the
// dependency version it was written for. When an upgrade moves the installed version, its test here fails:
// whoever upgrades checks whether the defect is fixed (each module says how), then removes the workaround
// or moves its version forward.
const folder = path.resolve(import.meta.dirname, '../db/workarounds');
const modules = readdirSync(folder).filter((name) => name.endsWith('.ts'));

function installedVersion(dependency: string): string {
  const manifest = path.resolve(import.meta.dirname, '../node_modules', dependency, 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

describe('workarounds for third-party defects', () => {
  it('are there to check', () => {
    expect(modules.length).toBeGreaterThan(0);
  });

  for (const name of modules) {
    it(`db/workarounds/${name} was written for the installed version of its dependency`, async () => {
      const { writtenFor } = (await import(path.join(folder, name))) as {
        writtenFor?: { dependency: string; version: string };
      };
      expect(writtenFor, 'a workaround module exports writtenFor').toBeDefined();
      if (!writtenFor) return;
      expect(
        installedVersion(writtenFor.dependency),
        `${writtenFor.dependency} moved: check whether db/workarounds/${name} is still needed`,
      ).toBe(writtenFor.version);
    });
  }
});
