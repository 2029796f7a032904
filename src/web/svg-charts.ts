import { html, type SafeHtml } from './html.ts';

/**
 * Charts drawn on the server as SVG: no script, nothing fetched, within the page CSP (colours come
 * from the stylesheet's .s0–.s5 classes, since style attributes are refused). Each chart is an image
 * with a title and a one-sentence description for screen readers, and its numbers follow in a
 * table a person can open.
 */

export interface Series {
  name: string;
  values: number[];
}

const WIDTH = 640;
const SERIES_CLASSES = 6;

/** A round number at or above `max`, so the axis reads 0 … top in easy steps. */
function axisTop(max: number): number {
  if (max <= 5) return 5;
  const magnitude = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * magnitude >= max) return step * magnitude;
  return 10 * magnitude;
}

function legend(series: readonly Series[]): SafeHtml {
  return html`<ul class="legend">${series.map(
    (s, i) => html`<li><span class="swatch s${i % SERIES_CLASSES}"></span>${s.name}</li>`,
  )}</ul>`;
}

function numbersTable(
  caption: string,
  columns: readonly string[],
  rows: readonly (readonly (string | number)[])[],
): SafeHtml {
  return html`<details><summary>${caption}: the numbers</summary><div class="table"><table><thead><tr>${columns.map(
    (column) => html`<th scope="col">${column}</th>`,
  )}</tr></thead><tbody>${rows.map(
    (row) =>
      html`<tr>${row.map((cell, i) => (i === 0 ? html`<th scope="row">${cell}</th>` : html`<td>${cell}</td>`))}</tr>`,
  )}</tbody></table></div></details>`;
}

/** Vertical bars, one per category (a day), each stacked from the series (the surfaces). */
export function stackedBars(options: {
  id: string;
  title: string;
  summary: string;
  categories: readonly string[];
  categoryLabel: (category: string) => string;
  series: readonly Series[];
}): SafeHtml {
  const { id, title, summary, categories, series } = options;
  const height = 220;
  const [left, right, top, bottom] = [40, 8, 12, 28];
  const plotWidth = WIDTH - left - right;
  const plotHeight = height - top - bottom;
  const totals = categories.map((_, i) => series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  const max = axisTop(Math.max(0, ...totals));
  const slot = plotWidth / Math.max(1, categories.length);
  const barWidth = Math.max(4, slot * 0.7);
  const y = (value: number) => top + plotHeight - (value / max) * plotHeight;
  const labelEvery = Math.ceil(categories.length / 7);
  const bars = categories.map((category, i) => {
    let base = 0;
    const x = left + i * slot + (slot - barWidth) / 2;
    const parts = series.map((s, k) => {
      const value = s.values[i] ?? 0;
      if (value === 0) return '';
      const from = y(base);
      base += value;
      const to = y(base);
      return html`<rect class="s${k % SERIES_CLASSES}" x="${x.toFixed(1)}" y="${to.toFixed(1)}" width="${barWidth.toFixed(1)}" height="${Math.max(0.5, from - to).toFixed(1)}"><title>${options.categoryLabel(category)}, ${s.name}: ${value}</title></rect>`;
    });
    const label =
      i % labelEvery === 0
        ? html`<text x="${(x + barWidth / 2).toFixed(1)}" y="${height - 8}" text-anchor="middle">${options.categoryLabel(category)}</text>`
        : '';
    return html`${parts}${label}`;
  });
  const ticks = (Number.isInteger(max / 2) ? [0, max / 2, max] : [0, max]).map(
    (value) =>
      html`<line class="axis" x1="${left}" x2="${WIDTH - right}" y1="${y(value).toFixed(1)}" y2="${y(value).toFixed(1)}"></line><text x="${left - 6}" y="${(y(value) + 4).toFixed(1)}" text-anchor="end">${value}</text>`,
  );
  return html`<figure class="chart" id="${id}"><figcaption id="${id}-title">${title}</figcaption>
<svg viewBox="0 0 ${WIDTH} ${height}" role="img" aria-labelledby="${id}-title ${id}-desc"><desc id="${id}-desc">${summary}</desc>${ticks}${bars}</svg>
${legend(series)}
${numbersTable(
  title,
  ['Day', ...series.map((s) => s.name), 'Total'],
  categories.map((category, i) => [
    options.categoryLabel(category),
    ...series.map((s) => s.values[i] ?? 0),
    totals[i],
  ]),
)}</figure>`;
}

export interface Bar {
  label: string;
  /** One value per series (a single series: one value). */
  values: number[];
}

/** Horizontal bars, one row per item, the series side by side on a row's bar (stacked). */
export function horizontalBars(options: {
  id: string;
  title: string;
  summary: string;
  bars: readonly Bar[];
  seriesNames: readonly string[];
}): SafeHtml {
  const { id, title, summary, bars, seriesNames } = options;
  const row = 26;
  // Wide enough for the longest label (about 7.5 px a character at the charts' type size), so a long
  // operation id is not cut at the picture's left edge; the plot takes what is left.
  const longest = Math.max(0, ...bars.map((bar) => bar.label.length));
  const labelWidth = Math.min(WIDTH / 2, Math.max(120, Math.ceil(longest * 7.5) + 16));
  const height = Math.max(1, bars.length) * row + 8;
  const plotWidth = WIDTH - labelWidth - 50;
  const max = axisTop(Math.max(0, ...bars.map((bar) => bar.values.reduce((a, b) => a + b, 0))));
  const rows = bars.map((bar, i) => {
    let offset = 0;
    const yTop = 4 + i * row;
    const parts = bar.values.map((value, k) => {
      if (value === 0) return '';
      const x = labelWidth + (offset / max) * plotWidth;
      const width = (value / max) * plotWidth;
      offset += value;
      return html`<rect class="s${k % SERIES_CLASSES}" x="${x.toFixed(1)}" y="${yTop + 3}" width="${Math.max(0.5, width).toFixed(1)}" height="${row - 10}"><title>${bar.label}, ${seriesNames[k] ?? ''}: ${value}</title></rect>`;
    });
    const total = bar.values.reduce((a, b) => a + b, 0);
    return html`<text x="${labelWidth - 8}" y="${yTop + row / 2 + 2}" text-anchor="end">${bar.label}</text>${parts}<text x="${(labelWidth + (total / max) * plotWidth + 6).toFixed(1)}" y="${yTop + row / 2 + 2}">${total}</text>`;
  });
  return html`<figure class="chart" id="${id}"><figcaption id="${id}-title">${title}</figcaption>
<svg viewBox="0 0 ${WIDTH} ${height}" role="img" aria-labelledby="${id}-title ${id}-desc"><desc id="${id}-desc">${summary}</desc>${rows}</svg>
${seriesNames.length > 1 ? legend(seriesNames.map((name) => ({ name, values: [] }))) : ''}
${numbersTable(
  title,
  ['', ...(seriesNames.length > 1 ? seriesNames : ['Count'])],
  bars.map((bar) => [bar.label, ...bar.values]),
)}</figure>`;
}
