import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// Every reason the repository cites can be read inside it: decision ids resolve in docs/decisions.md, file
// paths name tracked files, and nothing points at history (tracker numbers, review findings, the spec's
// numbered sections, notes kept outside the repository). Each failure lists every offending file:line.

const ROOT = join(import.meta.dirname, '..');
const THIS_FILE = 'test/citations.test.ts';
const LOG = 'docs/decisions.md';

const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);

const TEXT_FILE =
  /\.(ts|mts|cts|js|mjs|cjs|json|md|sql|yaml|yml|sh|toml)$|(^|\/)(\.ci\/run|Dockerfile|\.gitignore|\.nvmrc|\.node-version)$/;

/** Text the repository writes by hand: lock files, recorded benchmark results and drizzle's snapshots are data. */
const scanned = tracked.filter(
  (file) =>
    !file.endsWith('package-lock.json') &&
    !file.startsWith('bench/results/') &&
    !file.startsWith('db/migrations/meta/') &&
    existsSync(join(ROOT, file)) &&
    TEXT_FILE.test(file),
);

/**
 * Committed migrations are the schema's history: drizzle's migrator records a sha256 of each whole file
 * (comments included) when it applies it, so their text stays as applied. They are held to the decision
 * and path rules, not to the history rules.
 */
const isMigration = (file: string) => /^db\/migrations\/.*\.sql$/.test(file);

const lines = new Map(scanned.map((file) => [file, readFileSync(join(ROOT, file), 'utf8').split('\n')]));

type Hit = { file: string; line: number; text: string; what: string };

function scan(files: string[], find: (line: string, file: string) => string[]): Hit[] {
  const hits: Hit[] = [];
  for (const file of files) {
    (lines.get(file) ?? []).forEach((text, index) => {
      for (const what of find(text, file)) hits.push({ file, line: index + 1, text: text.trim(), what });
    });
  }
  return hits;
}

/** Fails with one line per hit, so a run names every place to fix. */
function expectNone(hits: Hit[]) {
  const report = hits.map((hit) => `${hit.file}:${hit.line}: ${hit.what}  |  ${hit.text.slice(0, 140)}`);
  expect(report, `\n${report.join('\n')}\n`).toEqual([]);
}

// ---- Decision ids -------------------------------------------------------------------------------------

/** The ids the log defines: its headings `## D-n …`. */
function definedDecisions(log: string): Set<string> {
  return new Set([...log.matchAll(/^#{2,3}\s+(D-\d+)\b/gm)].map((match) => match[1] as string));
}

const DECISION = /\bD-\d+\b/g;

// ---- File paths ---------------------------------------------------------------------------------------

/** The repository's top-level folders (those tracked now, and the usual ones in case one goes). */
const ROOTS = [
  ...new Set([
    ...tracked.filter((file) => file.includes('/')).map((file) => file.split('/')[0] as string),
    ...['server', 'db', 'test', 'docs', 'sdk', 'routers', 'bench', '.ci'],
  ]),
];

/**
 * A path into the repository: one of its top-level folders, then at least one segment. Not preceded by a
 * character that makes it part of a URL, a package path (`drizzle-orm/pg-core`), an absolute path or a
 * relative import (`../shared/contract`, checked by the compiler).
 */
const REPO_PATH = new RegExp(
  `(?<![\\w.@/-])(?:${ROOTS.map((root) => root.replace(/[.]/g, '\\.')).join('|')})/[\\w.*/-]*[\\w*]`,
  'g',
);
/** A bare Markdown file name (`style.md`): it must be one of the repository's. */
const MARKDOWN_NAME = /(?<![\w./-])[\w-]+\.md\b/g;

const directories = new Set(
  tracked.flatMap((file) =>
    file
      .split('/')
      .slice(0, -1)
      .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
  ),
);
const trackedSet = new Set(tracked);
const markdownNames = new Set(tracked.filter((file) => file.endsWith('.md')).map((file) => file.split('/').pop()));

function globToRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
    .replace(/\*\*/g, '\0')
    .replace(/\*/g, '[^/]*');
  return new RegExp(`^${body.replace(/\0/g, '.*')}(/.*)?$`);
}

/** Whether git ignores the path (made by a run, such as test/artifacts/): it names no committed file. */
function ignoredByGit(path: string): boolean {
  return [path, `${path}/`].some((candidate) => {
    try {
      execFileSync('git', ['check-ignore', '--no-index', '-q', candidate], { cwd: ROOT });
      return true;
    } catch {
      return false;
    }
  });
}

/** Whether a cited path names something in the repository; build output (`dist/`) is made, not tracked. */
function exists(path: string): boolean {
  if (/(^|\/)dist(\/|$)/.test(path)) return true;
  if (path.includes('*')) {
    const pattern = globToRegExp(path);
    // Files a run makes in an ignored folder (bench/results/feed-*.json) are named by a pattern too.
    return tracked.some((file) => pattern.test(file)) || ignoredByGit(path.slice(0, path.lastIndexOf('/')));
  }
  const bare = path.replace(/\/$/, '');
  return trackedSet.has(bare) || directories.has(bare) || ignoredByGit(bare);
}

/** The folders a path in `file` may be relative to: the repository root, then `file`'s own folders. */
function bases(file: string): string[] {
  const parts = file.split('/').slice(0, -1);
  return ['', ...parts.map((_, i) => `${parts.slice(0, i + 1).join('/')}/`)];
}

function missingPaths(line: string, file = ''): string[] {
  const found = [...line.matchAll(REPO_PATH)]
    .map((match) => match[0])
    .filter((path) => !bases(file).some((base) => exists(base + path)));
  const names = [...line.matchAll(MARKDOWN_NAME)].map((match) => match[0]).filter((name) => !markdownNames.has(name));
  return [...found, ...names].map((path) => `names a missing file: ${path}`);
}

// ---- Sections -----------------------------------------------------------------------------------------

/** The Markdown files whose sections are cited by name, as the repository writes them. */
const SECTIONED: Array<[RegExp, string]> = [
  [/^README(\.md)?$/, 'README.md'],
  [/^(docs\/)?operations\.md$/, 'docs/operations.md'],
  [/^partner guide$/, 'docs/partner-guide.md'],
];

/** `README § Deploy`, `partner guide § Review statistics, § Sales`: the file, then each name up to punctuation. */
const SECTION_CITE = /(README(?:\.md)?|(?:docs\/)?operations\.md|partner guide)((?:,? § [^.,;:()`'"§\n]+)+)/g;

const headingsOf = new Map<string, string[]>();
function headings(file: string): string[] {
  if (!headingsOf.has(file))
    headingsOf.set(
      file,
      [...readFileSync(join(ROOT, file), 'utf8').matchAll(/^#{1,6} (.+)$/gm)].map((m) => (m[1] as string).trim()),
    );
  return headingsOf.get(file) ?? [];
}

/**
 * Cited sections that match no heading of their file. A heading may go on past the name (`Clients: OpenAPI
 * …`), and the sentence past the heading (`partner guide § Sales count`).
 */
function missingSections(line: string): string[] {
  const missing: string[] = [];
  for (const [, name, cited] of line.matchAll(SECTION_CITE)) {
    const file = SECTIONED.find(([pattern]) => pattern.test(name as string))?.[1] as string;
    for (const section of (cited as string).split('§').slice(1)) {
      const title = section.replace(/^\s+|[\s,]+$/g, '');
      // A heading's name is what comes before its colon or parenthesis: `Sales: \`GET …\``.
      const matches = (heading: string) =>
        heading.startsWith(title) ||
        [heading, heading.split(/[:(]/)[0]?.trim() ?? ''].some(
          (name) => title === name || title.startsWith(`${name} `),
        );
      if (title && !headings(file).some(matches)) missing.push(`cites a missing section: ${name} § ${title}`);
    }
  }
  return missing;
}

// ---- History ------------------------------------------------------------------------------------------

/** What points at history or outside the repository; each is said in words or as a D-n / guide section. */
const HISTORY: Array<[RegExp, string]> = [
  [/\bissues? #?\d+/i, 'cites a tracker issue'],
  [/\bfindings? #?\d+/i, 'cites a review finding'],
  [/\bspec\s*§/i, "cites the spec's sections (use the partner guide's)"],
  [/(?<!\bRFC \d+ )§\s*\d/, 'cites a numbered section (use the partner guide § Name)'],
  [/\.\.\/shared\/(?:notes|spec)\b|\/work\/shared\b|\.\.\/shared\/[\w-]+\.md\b/, 'cites files outside the repository'],
  [/\bhelper[- ](?:rules|sessions?|engineers?|agents?|reports?|notes)\b/i, 'cites who worked on it'],
  [/\b(?:a|the|another|one) helper (?:found|measured|reported|noticed|saw|wrote)\b/i, 'cites who worked on it'],
];

function historyIn(line: string): string[] {
  return HISTORY.filter(([pattern]) => pattern.test(line)).map(([, what]) => what);
}

// ---- The rules ----------------------------------------------------------------------------------------

describe('citations inside the repository', () => {
  const others = scanned.filter((file) => file !== THIS_FILE);
  const defined = definedDecisions(readFileSync(join(ROOT, LOG), 'utf8'));

  it('the decision log defines D-1 to its last decision, in order, once each', () => {
    const headings = [...readFileSync(join(ROOT, LOG), 'utf8').matchAll(/^#{2,3}\s+(D-\d+)\b/gm)].map((m) => m[1]);
    expect(headings.length).toBeGreaterThanOrEqual(27);
    expect(headings).toEqual(Array.from({ length: headings.length }, (_, i) => `D-${i + 1}`));
  });

  it('every D-n cited is defined in the decision log', () => {
    expectNone(
      scan(others, (line) =>
        [...line.matchAll(DECISION)].filter((m) => !defined.has(m[0])).map((m) => `cites undefined ${m[0]}`),
      ),
    );
  });

  it('every repository file named exists (dist/ output excepted)', () => {
    expectNone(scan(others, missingPaths));
  });

  it('every section cited by name (README § Deploy, partner guide § Sales) is a heading of its file', () => {
    expectNone(scan(others, missingSections));
  });

  it('nothing cites history or files outside the repository (committed migrations excepted)', () => {
    expectNone(
      scan(
        others.filter((file) => !isMigration(file)),
        historyIn,
      ),
    );
  });
});

describe('the checks themselves', () => {
  it('catch an undefined decision, a missing file and each kind of history', () => {
    const defined = new Set(['D-1']);
    expect([...'see D-1 and D-99'.matchAll(DECISION)].filter((m) => !defined.has(m[0])).map((m) => m[0])).toEqual([
      'D-99',
    ]);
    expect(missingPaths('// held by test/pagination.test.ts and style.md')).toEqual([
      'names a missing file: test/pagination.test.ts',
      'names a missing file: style.md',
    ]);
    // Built from parts, so that this file does not itself read as the history it checks for.
    for (const line of [
      ['// as issue', '8 measured'].join(' '),
      ["it('rule (finding", "3)'"].join(' '),
      '/** spec §4.5 */',
      '(§4.7 table)',
      '// see ../shared/notes/x.md',
    ]) {
      expect(historyIn(line), line).not.toEqual([]);
    }
    expect(missingSections('# see README § Nowhere, and partner guide § Sales count')).toEqual([
      'cites a missing section: README § Nowhere',
    ]);
  });

  it('let through what is not a citation', () => {
    for (const line of [
      "import { pgTable } from 'drizzle-orm/pg-core';",
      "import { success } from '../shared/contract';",
      'GET http://127.0.0.1:3000/docs/assets/x.js and /partner/v1/brands',
      'the packed sdk/dist/index.js, db/migrations/*.sql, server/trpc/ratelimit/',
      'partner guide § Rate limits; RFC 9110 §10.2.3; README.md',
      'KST helpers; each helper accepts both',
    ]) {
      expect([...missingPaths(line), ...historyIn(line)], line).toEqual([]);
    }
  });
});
