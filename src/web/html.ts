const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** Markup that is already safe; anything else interpolated into `html` is escaped. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0];
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1];
  });
  return new SafeHtml(out);
}

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(value);
}

/**
 * The one stylesheet of every page, inline: the Content-Security-Policy allows exactly this text by
 * its hash (src/web/page-security.ts), so any other inline style is refused.
 */
export const PAGE_STYLE = `
  :root { color-scheme: light dark; --accent: #2f6f4f; }
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 0 auto; padding: 1rem; }
  header a { color: inherit; text-decoration: none; font-weight: 600; }
  code, pre { font-family: ui-monospace, monospace; font-size: 0.9em; }
  pre { overflow-x: auto; padding: 0.75rem; background: color-mix(in srgb, currentColor 6%, transparent); }
  .op { border-top: 1px solid color-mix(in srgb, currentColor 20%, transparent); padding: 0.75rem 0; }
  .method { display: inline-block; min-width: 4.5rem; font-weight: 700; color: var(--accent); }
  .tag { font-size: 0.8em; padding: 0 0.4em; border: 1px solid currentColor; border-radius: 0.3em; }
  .wrap { overflow-wrap: anywhere; }
  table { border-collapse: collapse; } td, th { text-align: left; padding: 0.2rem 0.6rem 0.2rem 0; vertical-align: top; }
`;

/**
 * The one script the pages use: a `<button data-copy="id">` copies the text of element `id` (the
 * new token on the agent console). Inline and allowed by its hash, like PAGE_STYLE.
 */
export const COPY_SCRIPT =
  "for (const b of document.querySelectorAll('button[data-copy]')) b.addEventListener('click', () => navigator.clipboard.writeText(document.getElementById(b.dataset.copy).textContent));";

export function copyScript(): SafeHtml {
  return new SafeHtml(`<script>${COPY_SCRIPT}</script>`);
}

export function page(title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · agent-commons</title>
<style>${new SafeHtml(PAGE_STYLE)}</style>
</head>
<body>
<header><a href="/">agent-commons</a></header>
<main>${body}</main>
</body>
</html>`.value;
}
