"use client";

import { useEffect, useState } from "react";
import { RAIL_KEY, THEME_KEY, THEMES, type Theme } from "./shell-prefs";

function stored(key: string): string | null {
  try {
    return window.localStorage.getItem(key);
  } catch {
    return null;
  }
}

function store(key: string, value: string | null): void {
  try {
    if (value === null) window.localStorage.removeItem(key);
    else window.localStorage.setItem(key, value);
  } catch {
    // Storage refused (private mode): the choice holds for this page only.
  }
}

/** The top bar's display controls: collapse the left rail (`part="rail"`), and the theme: system, light, dark (`part="theme"`); both remembered in this browser. */
export function ShellControls({ part }: { part: "rail" | "theme" }) {
  const [theme, setTheme] = useState<Theme>("system");
  const [collapsed, setCollapsed] = useState(false);
  useEffect(() => {
    const t = stored(THEME_KEY);
    setTheme(t === "light" || t === "dark" ? t : "system");
    setCollapsed(stored(RAIL_KEY) === "collapsed");
  }, []);

  const chooseTheme = (next: Theme) => {
    setTheme(next);
    store(THEME_KEY, next === "system" ? null : next);
    if (next === "system") delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = next;
  };
  const toggleRail = () => {
    const next = !collapsed;
    setCollapsed(next);
    store(RAIL_KEY, next ? "collapsed" : null);
    if (next) document.documentElement.dataset.rail = "collapsed";
    else delete document.documentElement.dataset.rail;
  };

  if (part === "rail") {
    return (
      <button type="button" className="rail-toggle" onClick={toggleRail} aria-pressed={collapsed} aria-label={collapsed ? "Show the sidebar" : "Hide the sidebar"} title={collapsed ? "Show the sidebar" : "Hide the sidebar"} data-testid="rail-toggle">
        <span aria-hidden="true">☰</span>
      </button>
    );
  }
  return (
      <label className="theme-picker" title="Theme">
        <span className="visually-hidden">Theme</span>
        <select value={theme} onChange={(e) => chooseTheme(e.target.value as Theme)} data-testid="theme-picker">
          {THEMES.map((t) => (
            <option key={t} value={t}>
              {t === "system" ? "System theme" : t === "light" ? "Light" : "Dark"}
            </option>
          ))}
        </select>
      </label>
  );
}
