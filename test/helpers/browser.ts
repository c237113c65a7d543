import { mkdirSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser, type Locator, type Page } from "playwright-core";
import { REPO_ROOT } from "./cli";

export const CHROMIUM = process.env.EMBERSCOPE_CHROMIUM ?? "/usr/bin/chromium";
export const SCREENSHOTS = path.join(REPO_ROOT, "test-results");

/** Debian's Chromium, headless, with no background traffic (the network is closed here). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

export function screenshotPath(name: string): string {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return path.join(SCREENSHOTS, `${name}.png`);
}

/** A new page whose uncaught errors are collected (tests end by expecting none). */
export async function newWatchedPage(browser: Browser, options?: Parameters<Browser["newPage"]>[0]): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage(options);
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  return { page, errors };
}

/** How a row of controls lies: the spread of its visible children's vertical centres (0: one row), its height, and any sideways overflow. */
export function rowShape(row: Locator): Promise<{ spread: number; height: number; overflow: number }> {
  return row.evaluate((el) => {
    const mids = [...el.children].filter((c) => (c as HTMLElement).offsetParent !== null).map((c) => c.getBoundingClientRect().top + c.getBoundingClientRect().height / 2);
    return { spread: Math.round(Math.max(...mids) - Math.min(...mids)), height: el.getBoundingClientRect().height, overflow: el.scrollWidth - el.clientWidth };
  });
}
