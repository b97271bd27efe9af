// Headless Chromium for the dashboard's tests: Debian's package (the test setup installs it when
// missing) driven by playwright-core, with the flags that keep it off the network this machine does
// not have. Also: an axe-core accessibility check of a page, and screenshots kept as test artifacts
// under test-artifacts/dashboard/ (ignored by git).
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts', 'dashboard');
export const WIDTHS = [1280, 390] as const;

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic', '--no-first-run'];

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[]; failureSummary?: string }>;
}

/** The WCAG 2.1 A and AA violations axe-core finds on the page as it is now. */
export async function accessibilityViolations(page: Page): Promise<AxeViolation[]> {
  // Injected through the DevTools protocol (not a <script> the page's CSP would refuse).
  await page.evaluate(AXE);
  return page.evaluate(async () => {
    // Runs in the page: its globals, not Node's.
    const global = globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> }; document: unknown };
    const result = await global.axe.run(global.document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n) => ({ target: n.target, failureSummary: n.failureSummary })) }));
  });
}

/** Saves a full-page screenshot as test-artifacts/dashboard/<name>.png; returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
