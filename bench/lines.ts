import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

// npm run bench:lines: the service's size in physical lines (comments and blank lines included) of the .ts
// files under server/, routers/, db/ (its migrations and seed data aside) and scripts/, by folder, then a
// JSON line.

const ROOT = path.resolve(import.meta.dirname, '..');
const FOLDERS = ['server', 'routers', 'db', 'scripts'];
const LEFT_OUT = ['db/migrations/', 'db/seed/'];

/** Physical lines: each newline ends one, and text after the last newline is one more. */
function physicalLines(text: string): number {
  const newlines = text.split('\n').length - 1;
  return text.length > 0 && !text.endsWith('\n') ? newlines + 1 : newlines;
}

const byFolder: Record<string, { files: number; lines: number }> = {};
for (const folder of FOLDERS) {
  byFolder[folder] = { files: 0, lines: 0 };
  for (const entry of readdirSync(path.join(ROOT, folder), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const file = path.relative(ROOT, path.join(entry.parentPath, entry.name)).split(path.sep).join('/');
    if (LEFT_OUT.some((prefix) => file.startsWith(prefix))) continue;
    byFolder[folder].files++;
    byFolder[folder].lines += physicalLines(readFileSync(path.join(ROOT, file), 'utf8'));
  }
}
const total = Object.values(byFolder).reduce((sum, { lines }) => sum + lines, 0);
for (const [folder, { files, lines }] of Object.entries(byFolder))
  process.stdout.write(`${folder.padEnd(8)} ${String(files).padStart(4)} files ${String(lines).padStart(7)} lines\n`);
process.stdout.write(`total             ${String(total).padStart(7)} lines\n`);
process.stdout.write(`${JSON.stringify({ lines: total, byFolder })}\n`);
