import type { LabelPolicy } from '../model/records.js';
import type { View } from '../util/readonly.js';
/** The one stylesheet of the login pages, served by Sesame (no external assets, no JavaScript). */
export const STYLESHEET_PATH = '/ui/login/resources/sesame.css';

export const STYLESHEET = `
:root {
  --bg: #f4f5f8; --card: #ffffff; --text: #1c2030; --muted: #5d6476; --line: #dfe2ea;
  --accent: #3b4fd8; --accent-dark: #2c3cb0; --danger: #b42318; --danger-bg: #fef3f2; --radius: 12px;
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root { --bg: #12141c; --card: #1b1e29; --text: #e8eaf2; --muted: #a0a6b8; --line: #2d3242;
    --accent: #7e8cff; --accent-dark: #6675f5; --danger: #ff8a80; --danger-bg: #3a1c1c; }
}
* { box-sizing: border-box; }
html, body { margin: 0; padding: 0; }
body {
  min-height: 100vh; display: flex; flex-direction: column; align-items: center; justify-content: center;
  background: var(--bg); color: var(--text);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  padding: 24px 16px;
}
main.card {
  width: 100%; max-width: 420px; background: var(--card); border: 1px solid var(--line);
  border-radius: var(--radius); padding: 32px 32px 28px; box-shadow: 0 10px 30px rgba(20, 24, 40, .08);
}
.brand { display: flex; align-items: center; gap: 10px; margin-bottom: 20px; font-weight: 600; letter-spacing: .2px; }
.brand .logo { width: 32px; height: 32px; border-radius: 9px; background: linear-gradient(135deg, var(--accent), #8e5cf7);
  display: inline-flex; align-items: center; justify-content: center; color: #fff; font-size: 18px; }
h1 { font-size: 24px; line-height: 1.25; margin: 0 0 8px; }
p.intro { color: var(--muted); margin: 0 0 22px; }
label { display: block; font-size: 14px; font-weight: 600; margin: 14px 0 6px; }
input[type=text], input[type=password], input[type=email] {
  width: 100%; font: inherit; padding: 11px 12px; border-radius: 8px; border: 1px solid var(--line);
  background: transparent; color: inherit; outline: none;
}
input:focus { border-color: var(--accent); box-shadow: 0 0 0 3px rgba(59, 79, 216, .18); }
img.qr { display: block; margin: 8px auto 12px; width: 200px; height: 200px; image-rendering: pixelated; }
p.secret { text-align: center; margin: 0 0 16px; }
code.secret { font-size: 16px; letter-spacing: 1px; }
code.secret span { white-space: nowrap; }
input.code { letter-spacing: 6px; font-size: 22px; text-align: center; font-variant-numeric: tabular-nums; }
.row { display: flex; gap: 12px; } .row > div { flex: 1; }
button, .button {
  display: block; width: 100%; margin-top: 22px; padding: 11px 16px; font: inherit; font-weight: 600;
  color: #fff; background: var(--accent); border: 0; border-radius: 8px; cursor: pointer; text-align: center; text-decoration: none;
}
button:hover { background: var(--accent-dark); }
button.secondary, .links a { background: none; color: var(--accent); border: 0; margin-top: 12px; font-weight: 500; }
button.secondary:hover { background: none; text-decoration: underline; }
.links { margin-top: 18px; text-align: center; font-size: 14px; }
.links a { text-decoration: none; } .links a:hover { text-decoration: underline; }
.brand.org img { max-height: 48px; max-width: 100%; }
nav.policy-links { display: flex; flex-wrap: wrap; gap: 6px 14px; justify-content: center; margin-bottom: 6px; }
nav.policy-links a { color: var(--muted); }
label.check { display: block; font-weight: 400; font-size: 14px; margin: 12px 0 0; }
label.check input { width: auto; margin: 0 6px 0 0; }
.info { background: var(--line); border-radius: 8px; padding: 10px 12px; margin: 0 0 16px; font-size: 14px; }
.idps { margin-top: 18px; }
.idps p.divider { text-align: center; color: var(--muted); font-size: 14px; margin: 0 0 4px; }
.idps button.secondary { border: 1px solid var(--line); color: var(--text); margin-top: 8px; }
.idps button.secondary:hover { text-decoration: none; border-color: var(--accent); }
button.link { background: none; color: var(--accent); border: 0; padding: 0; margin: 8px 0 0; width: auto; font-weight: 500; font-size: 14px; }
button.link:hover { background: none; text-decoration: underline; }
.error { background: var(--danger-bg); color: var(--danger); border-radius: 8px; padding: 10px 12px; margin: 0 0 16px; font-size: 14px; }
.user-chip { display: inline-block; padding: 4px 12px; border: 1px solid var(--line); border-radius: 999px; font-size: 14px; margin-bottom: 6px; }
ul.accounts { list-style: none; padding: 0; margin: 0; }
ul.accounts li { margin: 0 0 10px; }
ul.accounts button { margin: 0; display: flex; align-items: center; gap: 12px; text-align: left; color: var(--text);
  background: transparent; border: 1px solid var(--line); font-weight: 500; }
ul.accounts button:hover { border-color: var(--accent); background: transparent; }
.avatar { flex: none; width: 36px; height: 36px; border-radius: 50%; background: var(--accent); color: #fff;
  display: inline-flex; align-items: center; justify-content: center; font-weight: 600; }
.account-text small { display: block; color: var(--muted); font-size: 13px; }
footer { margin-top: 18px; color: var(--muted); font-size: 12px; }
@media (max-width: 480px) { main.card { padding: 24px 20px; border-radius: 0; border-left: 0; border-right: 0; } .row { flex-direction: column; gap: 0; } }
`;

/** Where an org's (or the instance's: `instance`) label stylesheet is served; `?v=` changes with the policy. */
export const LABEL_STYLESHEET_PATH = '/ui/login/resources/label/:owner';

const LIGHT = { bg: '#f4f5f8', text: '#1c2030', accent: '#3b4fd8', danger: '#b42318' };
const DARK = { bg: '#12141c', text: '#e8eaf2', accent: '#7e8cff', danger: '#ff8a80' };

/**
 * The label policy as a stylesheet over the one above: its colours for the light and the dark
 * scheme, and its theme (auto follows the browser; light or dark is fixed). Served from Sesame
 * (the pages' Content-Security-Policy allows only its own stylesheets); colours are validated hex.
 */
export function labelStylesheet(label: View<LabelPolicy>, fontUrl?: string): string {
  const font = fontUrl
    ? `@font-face { font-family: "Org"; src: url("${fontUrl}"); font-display: swap; }\nbody, input, button { font-family: "Org", system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }\n`
    : '';
  return font + labelColours(label);
}

function labelColours(label: View<LabelPolicy>): string {
  const light = { bg: label.backgroundColor || LIGHT.bg, text: label.fontColor || LIGHT.text, accent: label.primaryColor || LIGHT.accent, danger: label.warnColor || LIGHT.danger };
  const dark = { bg: label.backgroundColorDark || DARK.bg, text: label.fontColorDark || DARK.text, accent: label.primaryColorDark || DARK.accent, danger: label.warnColorDark || DARK.danger };
  const vars = (c: typeof light) => `--bg: ${c.bg}; --text: ${c.text}; --accent: ${c.accent}; --accent-dark: ${c.accent}; --danger: ${c.danger};`;
  if (label.themeMode === 'THEME_MODE_LIGHT')
    return `:root { color-scheme: light; ${vars(light)} }\n@media (prefers-color-scheme: dark) { :root { ${vars(light)} --muted: #5d6476; --line: #dfe2ea; } }\n`;
  if (label.themeMode === 'THEME_MODE_DARK') return `:root { color-scheme: dark; ${vars(dark)} --muted: #a0a6b8; --line: #2d3242; }\n`;
  return `:root { ${vars(light)} }\n@media (prefers-color-scheme: dark) { :root { ${vars(dark)} } }\n`;
}
