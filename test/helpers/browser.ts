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

/** Opens the popover of the page's "Add to investigation" button and waits for its open investigations. */
export async function openInvestigationPicker(page: Page): Promise<void> {
  await page.locator("[data-testid=add-to-investigation]").click();
  await page.locator("[data-testid=add-to-investigation-popover]").waitFor();
  await page.locator("[data-testid=add-to-investigation-popover] >> text=Loading open investigations").waitFor({ state: "detached" });
}

/**
 * Adds the page's current view to an existing investigation through the popover's list, checks
 * the popover closed and its link names the new cell, and returns that cell's id.
 */
export async function addToInvestigation(page: Page, investigationId: string): Promise<string> {
  await openInvestigationPicker(page);
  await page.locator(`[data-testid=add-to-investigation-choice][data-investigation-id="${investigationId}"]`).click();
  const link = page.locator("[data-testid=add-to-investigation-open]");
  await link.waitFor();
  if ((await page.locator("[data-testid=add-to-investigation-popover]").count()) !== 0) throw new Error("the popover did not close once the cell was added");
  const href = (await link.getAttribute("href")) ?? "";
  const m = new RegExp(`^/investigations/${investigationId}#cell-(cell_[0-9a-z]+)$`).exec(href);
  if (!m) throw new Error(`the added cell's link is ${href}`);
  return m[1];
}
