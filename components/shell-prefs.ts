/**
 * The person's display preferences, kept in this browser (localStorage) and applied to <html>
 * before the first paint by THEME_BOOT_SCRIPT (app/layout.tsx), so a page never flashes the other
 * theme or the rail it was told to hide.
 */
export const THEMES = ["system", "light", "dark"] as const;
export type Theme = (typeof THEMES)[number];

export const THEME_KEY = "emberscope.theme";
export const RAIL_KEY = "emberscope.rail";

/** Sets data-theme ("light" | "dark"; absent for system) and data-rail ("collapsed" | absent) on <html> from storage. */
export const THEME_BOOT_SCRIPT = `(function(){try{var d=document.documentElement,t=localStorage.getItem(${JSON.stringify(THEME_KEY)});if(t==="light"||t==="dark")d.dataset.theme=t;if(localStorage.getItem(${JSON.stringify(RAIL_KEY)})==="collapsed")d.dataset.rail="collapsed";}catch(e){}})();`;
