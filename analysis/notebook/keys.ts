/**
 * The notebook page's command-mode keys (Jupyter's, where Jupyter has one): the page's `?` overlay
 * and docs/notebooks.md both list these.
 */
export const NOTEBOOK_KEYS: readonly (readonly [key: string, what: string])[] = [
  ["Enter", "edit the selected cell (note or SQL)"],
  ["Esc", "leave editing: back to command mode"],
  ["Shift+Enter", "run the cell and select the next"],
  ["Ctrl+Enter", "run the cell"],
  ["J / ↓, K / ↑", "select the next / previous cell"],
  ["Alt+↓ / Alt+↑", "move the cell down / up"],
  ["A / B", "insert a SQL cell above / below"],
  ["M / Y", "make the cell a note / a SQL cell"],
  ["D D", "delete the cell"],
  ["Z", "undo the last delete"],
  ["H / F", "record a hypothesis / a finding after the cell"],
  ["?", "show these keys"],
];
