import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS } from '../db/seed/demo';
import { appRouter } from '../routers';
import { restRoutes } from '../server/http/routes';
import { openTestDatabase } from './support/database';
import { startServer, testServices } from './support/services';

// D-15: /docs works in a real browser, offline: Debian's Chromium, headless, driven by playwright-core
// against an in-process server. Without /usr/bin/chromium (a fresh machine) the file is skipped and says
// why; .ci/run installs the package. The screenshot is kept in test/artifacts/ (git-ignored). Every code
// block of every page must be readable (WCAG contrast), and no page may log a console error.

const CHROMIUM = '/usr/bin/chromium';
const installed = existsSync(CHROMIUM);
const ARTIFACTS = path.resolve(import.meta.dirname, 'artifacts');
/** The two colours of an element's computed style the badge check reads. */
type CSSColours = { color: string; backgroundColor: string };

/** Every REST operation of the router, and every webhook event of the document: the reference shows each. */
const document = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../openapi.json'), 'utf8')) as {
  webhooks?: Record<string, unknown>;
};
const OPERATIONS = [...restRoutes(appRouter).map((route) => route.path), ...Object.keys(document.webhooks ?? {})];

if (!installed) console.warn(`docs.browser.test.ts skipped: ${CHROMIUM} is not installed (apt-get install chromium)`);

describe.skipIf(!installed)(`/docs in Chromium (skipped when ${CHROMIUM} is absent)`, () => {
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    const database = await openTestDatabase();
    base = (await startServer(testServices(database.db))).base;
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('shows the guide with working links to the SDK guide and the reference', async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/docs`);
    await expect(page.locator('h1').first().textContent()).resolves.toContain('partner guide');
    await page.click('nav >> text=TypeScript SDK');
    await page.waitForURL(`${base}/docs/sdk`);
    await expect(page.locator('h1').first().textContent()).resolves.toBe('@partner-reporting/sdk');
    await page.click('nav >> text=API reference');
    await page.waitForURL(`${base}/docs/reference`);
    await page.close();
  });

  it('renders the version badges of the reference header as Swagger UI draws them: white text on its pill', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${base}/docs/reference`);
    const badges = page.locator('.info .title small pre');
    await badges.first().waitFor();
    // Each badge's text colour against the first non-transparent background behind it; the site's own
    // `pre` rule once painted that background light grey under Swagger UI's white text.
    const seen = await badges.evaluateAll((nodes) =>
      nodes.map((node) => {
        const luminance = (colour: string) => {
          const [r, g, b] = (colour.match(/[\d.]+/g) ?? []).slice(0, 3).map((value) => {
            const channel = Number(value) / 255;
            return channel <= 0.03928 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
          });
          return 0.2126 * (r ?? 0) + 0.7152 * (g ?? 0) + 0.0722 * (b ?? 0);
        };
        // Runs in the page; the project compiles without the DOM library, so the one browser call is typed here.
        const style = (globalThis as unknown as { getComputedStyle(element: unknown): CSSColours }).getComputedStyle;
        let behind: typeof node | null = node;
        let background = 'rgba(0, 0, 0, 0)';
        while (behind) {
          const colour = style(behind).backgroundColor;
          if (colour !== 'rgba(0, 0, 0, 0)' && colour !== 'transparent') {
            background = colour;
            break;
          }
          behind = behind.parentElement;
        }
        const [light, dark] = [luminance(style(node).color), luminance(background)].sort((a, b) => b - a);
        return { text: node.textContent?.trim(), contrast: ((light ?? 0) + 0.05) / ((dark ?? 0) + 0.05) };
      }),
    );
    expect(seen.map((badge) => badge.text)).toEqual(expect.arrayContaining(['1.0.0']));
    // Swagger UI's own pills: white on grey (version) and on green (OAS 3.1, a contrast of about 2.2).
    for (const badge of seen) expect(badge.contrast, `badge ${badge.text}`).toBeGreaterThanOrEqual(2);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.locator('.info').screenshot({ path: path.join(ARTIFACTS, 'docs-reference-header.png') });
    await page.close();
  });

  // WCAG 2 contrast of every visible pre and code element against the background it is painted on. The
  // version badges of Swagger UI's header are its own design (white on a coloured pill) and checked above.
  for (const at of ['/docs', '/docs/sdk', '/docs/reference']) {
    it(`shows every code block of ${at} readable: a contrast of 4.5 or more, no console error`, async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
      const errors: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      page.on('pageerror', (error) => errors.push(error.message));
      await page.goto(`${base}${at}`);
      if (at === '/docs/reference') {
        // Swagger UI draws every operation with the same components and stylesheet, and each one opened
        // costs a redraw of all those open: one REST operation with every kind of parameter and a paged
        // answer, and one webhook event, stand for the rest (the next test lists every operation).
        for (const path of ['/partner/v1/brands/{brand_code}/reviews', 'review.upserted']) {
          const operation = page.locator('.opblock', { has: page.locator(`[data-path="${path}"]`) });
          await operation.locator('.opblock-summary-control').click();
          await operation.locator('.opblock-body').waitFor();
        }
        await page.locator('.opblock-body .microlight').first().waitFor();
      }
      const blocks = await page.locator('pre, code').evaluateAll((nodes) =>
        nodes
          .filter((node) => (node as unknown as { getClientRects(): { length: number } }).getClientRects().length > 0)
          .filter((node) => !node.closest('.info .title small'))
          .map((node) => {
            const style = (globalThis as unknown as { getComputedStyle(element: unknown): CSSColours })
              .getComputedStyle;
            const channels = (colour: string) => (colour.match(/[\d.]+/g) ?? []).map(Number);
            const luminance = ([r = 0, g = 0, b = 0]: number[]) => {
              const linear = (value: number) => {
                const channel = value / 255;
                return channel <= 0.03928 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
              };
              return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
            };
            // The effective background: the translucent layers behind the element, laid over the first
            // opaque one (or the page's white), nearest last.
            const layers: number[][] = [];
            for (let behind: typeof node | null = node; behind; behind = behind.parentElement) {
              const [r = 0, g = 0, b = 0, alpha = 1] = channels(style(behind).backgroundColor);
              if (style(behind).backgroundColor === 'transparent' || alpha === 0) continue;
              layers.push([r, g, b, alpha]);
              if (alpha === 1) break;
            }
            const background = layers.reduceRight(
              (under, [r = 0, g = 0, b = 0, alpha = 1]) => [
                r * alpha + (under[0] ?? 0) * (1 - alpha),
                g * alpha + (under[1] ?? 0) * (1 - alpha),
                b * alpha + (under[2] ?? 0) * (1 - alpha),
              ],
              [255, 255, 255],
            );
            const [light, dark] = [luminance(channels(style(node).color)), luminance(background)].sort((a, b) => b - a);
            return {
              text: (node.textContent ?? '').trim().slice(0, 40),
              colours: `${style(node).color} on rgb(${background.map(Math.round).join(', ')})`,
              contrast: ((light ?? 0) + 0.05) / ((dark ?? 0) + 0.05),
            };
          }),
      );
      expect(blocks.length).toBeGreaterThan(3);
      const unreadable = blocks.filter((block) => block.contrast < 4.5);
      expect(unreadable, `${unreadable.length} of ${blocks.length} code blocks`).toEqual([]);
      expect(errors).toEqual([]);
      await page.close();
    });
  }

  it('lists every operation of the router; "Try it out" fills in no dates, and with the demo key answers 200', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    // Offline: every request the page makes stays on this server.
    const foreign: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(base) && !request.url().startsWith('data:')) foreign.push(request.url());
    });
    await page.goto(`${base}/docs/reference`);
    await page.locator('.opblock-summary-path').first().waitFor();
    const paths = await page
      .locator('.opblock-summary-path')
      .evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-path')));
    expect(paths.sort()).toEqual([...OPERATIONS].sort());
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'docs-reference.png') });

    // Authorize with the key, as a partner would.
    await page.click('.auth-wrapper button.authorize');
    await page.fill('.modal-ux input[type="text"]', DEMO_KEYS.active);
    await page.click('.modal-ux .auth-btn-wrapper button.authorize');
    await page.click('.modal-ux button.btn-done');

    const operation = page.locator('.opblock', { has: page.locator('[data-path="/partner/v1/brands"]') });
    await operation.locator('.opblock-summary').click();
    await operation.locator('button.try-out__btn').click();
    await operation.locator('button.execute').click();
    const status = operation.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor();
    await expect(status.textContent()).resolves.toContain('200');
    await expect(operation.locator('.live-responses-table').textContent()).resolves.toContain('chicken-house');

    // "Try it out" fills in no value of its own: `from` and `to` left empty take the documented defaults.
    const stats = page.locator('.opblock', {
      has: page.locator('[data-path="/partner/v1/brands/{brand_code}/review-stats"]'),
    });
    await stats.locator('.opblock-summary').click();
    await stats.locator('button.try-out__btn').click();
    for (const name of ['from', 'to']) {
      await expect(stats.locator(`tr[data-param-name="${name}"] input`).inputValue(), name).resolves.toBe('');
    }

    await operation.locator('.live-responses-table').scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(ARTIFACTS, 'docs-try-it-out.png') });
    expect(foreign).toEqual([]);
    await page.close();
  });
});
