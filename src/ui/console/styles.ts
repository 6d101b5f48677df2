/** The console's one stylesheet, served by Sesame (the pages' CSP allows only its own styles, no scripts). */
export const CONSOLE_STYLESHEET_PATH = '/ui/console/resources/console.css';

export const CONSOLE_STYLESHEET = `
:root {
  --bg: #f4f5f8; --card: #ffffff; --text: #1c2030; --muted: #5d6476; --line: #dfe2ea;
  --accent: #3b4fd8; --accent-dark: #2c3cb0; --danger: #b42318; --danger-bg: #fef3f2; --ok: #067647; --ok-bg: #ecfdf3;
  --warn: #b54708; --warn-bg: #fffaeb; color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root { --bg: #12141c; --card: #1b1e29; --text: #e8eaf2; --muted: #a0a6b8; --line: #2d3242;
    --accent: #7e8cff; --accent-dark: #6675f5; --danger: #ff8a80; --danger-bg: #3a1c1c; --ok: #6ce9a6; --ok-bg: #10291d;
    --warn: #fec84b; --warn-bg: #2f2410; }
}
* { box-sizing: border-box; }
html, body { margin: 0; padding: 0; }
body.console { background: var(--bg); color: var(--text); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
a { color: var(--accent); }
header.top { display: flex; align-items: center; gap: 18px; padding: 10px 20px; background: var(--card); border-bottom: 1px solid var(--line); flex-wrap: wrap; }
.brand { display: inline-flex; align-items: center; gap: 8px; font-weight: 600; color: var(--text); text-decoration: none; }
.brand small { color: var(--muted); font-weight: 500; }
.brand .logo { width: 28px; height: 28px; border-radius: 8px; background: linear-gradient(135deg, var(--accent), #8e5cf7);
  display: inline-flex; align-items: center; justify-content: center; color: #fff; font-size: 15px; }
header .org { flex: 1; }
header .me { display: flex; align-items: center; gap: 10px; color: var(--muted); font-size: 14px; }
form.inline { display: inline; margin: 0; }
.org-switch { display: flex; gap: 6px; align-items: center; } .org-switch select { width: auto; max-width: 280px; }
.frame { display: flex; min-height: calc(100vh - 52px); }
nav.side { width: 200px; flex: none; padding: 16px 10px; border-right: 1px solid var(--line); background: var(--card); }
nav.side ul { list-style: none; margin: 0; padding: 0; }
nav.side a { display: block; padding: 7px 12px; border-radius: 8px; color: var(--text); text-decoration: none; }
nav.side a:hover { background: var(--bg); }
nav.side a[aria-current=page] { background: var(--accent); color: #fff; }
main.content { flex: 1; padding: 24px 28px; max-width: 1100px; }
main.narrow { max-width: 520px; margin: 60px auto; background: var(--card); border: 1px solid var(--line); border-radius: 12px; }
h1 { font-size: 24px; margin: 0 0 16px; } h2 { font-size: 18px; margin: 28px 0 10px; } h3 { font-size: 16px; margin: 0 0 6px; }
p.intro, p.empty, small { color: var(--muted); }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 12px; padding: 14px 18px; margin: 0 0 16px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); gap: 14px; margin-bottom: 16px; }
.stat strong { display: block; font-size: 28px; }
details.form-card > summary { cursor: pointer; font-weight: 600; color: var(--accent); }
details.form-card[open] > summary { margin-bottom: 8px; }
.field { margin: 10px 0; } .field label { display: block; font-size: 13px; font-weight: 600; margin-bottom: 4px; }
.field small { display: block; margin-top: 2px; }
input[type=text], input[type=password], input[type=email], input[type=search], input[type=datetime-local], select, textarea {
  width: 100%; max-width: 480px; font: inherit; padding: 8px 10px; border-radius: 8px; border: 1px solid var(--line); background: var(--card); color: inherit; }
textarea { font-family: ui-monospace, monospace; font-size: 13px; }
label.check { display: block; margin: 8px 0; font-size: 14px; }
button { font: inherit; font-weight: 600; border-radius: 8px; padding: 7px 14px; cursor: pointer; border: 1px solid transparent; }
button.primary { background: var(--accent); color: #fff; margin-top: 8px; } button.primary:hover { background: var(--accent-dark); }
button.secondary { background: transparent; color: var(--accent); border-color: var(--line); }
button.danger { background: var(--danger); color: #fff; }
button.small { padding: 3px 10px; font-size: 13px; }
.actions { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 8px 0 16px; }
details.remove { display: inline-block; } details.remove summary { cursor: pointer; color: var(--danger); list-style: none; padding: 7px 4px; }
table { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line); border-radius: 12px; overflow: hidden; font-size: 14px; }
th, td { text-align: left; padding: 8px 12px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
tr:last-child td { border-bottom: 0; }
td code, dd code { font-size: 12px; } td { overflow-wrap: anywhere; } td:first-child { white-space: nowrap; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 6px 18px; margin: 0 0 16px; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px; font-weight: 600; }
.badge.ok { background: var(--ok-bg); color: var(--ok); } .badge.warn { background: var(--warn-bg); color: var(--warn); } .badge.muted { background: var(--line); color: var(--muted); }
.notice { border-radius: 8px; padding: 10px 12px; margin: 0 0 16px; }
.notice.error { background: var(--danger-bg); color: var(--danger); } .notice.info { background: var(--ok-bg); color: var(--ok); }
.notice a.button { display: inline-block; margin-left: 8px; background: var(--accent); color: #fff; font-weight: 600; border-radius: 8px; padding: 3px 10px; text-decoration: none; }
section.once { border: 2px solid var(--accent); border-radius: 12px; padding: 12px 16px; margin: 0 0 16px; background: var(--card); }
pre.secret { white-space: pre-wrap; word-break: break-all; background: var(--bg); padding: 10px; border-radius: 8px; font-size: 13px; }
form.filters { display: flex; flex-wrap: wrap; gap: 10px; align-items: flex-end; margin-bottom: 12px; }
form.filters .field { margin: 0; } form.filters input { width: 220px; }
ul.links { list-style: none; padding: 0; } ul.links li { padding: 6px 0; border-bottom: 1px solid var(--line); }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
@media (max-width: 720px) { .frame { flex-direction: column; } nav.side { width: auto; border-right: 0; border-bottom: 1px solid var(--line); }
  nav.side ul { display: flex; flex-wrap: wrap; gap: 4px; } main.content { padding: 16px; } }
`;
