/**
 * SVG charts written by hand, so the bench needs no plotting dependency: horizontal bar
 * panels side by side (one per measure) and a line chart of series over time.
 */

export interface Bar {
  label: string;
  value: number;
  /** Drawn in the failure colour with this text instead of a bar. */
  failed?: string;
}

export interface BarPanel {
  title: string;
  unit: string;
  bars: Bar[];
}

export interface Series {
  label: string;
  points: Array<{ x: number; y: number }>;
}

const FONT = 'font-family="sans-serif" font-size="12"';
const COLOURS = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#b07aa1', '#9c755f'];

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function formatValue(value: number): string {
  return value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(1);
}

export function barPanelsSvg(title: string, panels: BarPanel[], subtitle = ''): string {
  const labelWidth = 250;
  const panelWidth = 250;
  const rowHeight = 26;
  const top = 60;
  const rows = Math.max(...panels.map((panel) => panel.bars.length));
  const width = labelWidth + panels.length * (panelWidth + 20) + 20;
  const height = top + rows * rowHeight + 20;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="20" ${FONT} font-size="15" font-weight="bold">${escapeXml(title)}</text>`,
    `<text x="10" y="38" ${FONT} fill="#555">${escapeXml(subtitle)}</text>`,
  ];
  panels[0].bars.forEach((bar, row) => {
    parts.push(`<text x="${labelWidth - 8}" y="${top + row * rowHeight + 17}" ${FONT} text-anchor="end">${escapeXml(bar.label)}</text>`);
  });
  panels.forEach((panel, index) => {
    const x0 = labelWidth + index * (panelWidth + 20);
    const max = Math.max(1e-9, ...panel.bars.map((bar) => (bar.failed ? 0 : bar.value)));
    parts.push(`<text x="${x0}" y="${top - 8}" ${FONT} font-weight="bold">${escapeXml(`${panel.title} (${panel.unit})`)}</text>`);
    panel.bars.forEach((bar, row) => {
      const y = top + row * rowHeight;
      if (bar.failed) {
        parts.push(`<text x="${x0 + 4}" y="${y + 17}" ${FONT} fill="#c00">${escapeXml(bar.failed)}</text>`);
        return;
      }
      const length = Math.max(1, (bar.value / max) * (panelWidth - 60));
      parts.push(`<rect x="${x0}" y="${y + 4}" width="${length.toFixed(1)}" height="${rowHeight - 8}" fill="${COLOURS[row % COLOURS.length]}"/>`);
      parts.push(`<text x="${(x0 + length + 4).toFixed(1)}" y="${y + 17}" ${FONT}>${formatValue(bar.value)}</text>`);
    });
  });
  parts.push('</svg>');
  return parts.join('\n');
}

export function lineChartSvg(title: string, xLabel: string, yLabel: string, series: Series[]): string {
  const width = 760;
  const height = 380;
  const left = 70;
  const right = 170;
  const top = 40;
  const bottom = 50;
  const all = series.flatMap((s) => s.points);
  const maxX = Math.max(1e-9, ...all.map((p) => p.x));
  const maxY = Math.max(1e-9, ...all.map((p) => p.y)) * 1.1;
  const px = (x: number): number => left + (x / maxX) * (width - left - right);
  const py = (y: number): number => height - bottom - (y / maxY) * (height - top - bottom);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="20" ${FONT} font-size="15" font-weight="bold">${escapeXml(title)}</text>`,
    `<line x1="${left}" y1="${height - bottom}" x2="${width - right}" y2="${height - bottom}" stroke="#333"/>`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${height - bottom}" stroke="#333"/>`,
    `<text x="${(left + width - right) / 2}" y="${height - 12}" ${FONT} text-anchor="middle">${escapeXml(xLabel)}</text>`,
    `<text x="16" y="${(top + height - bottom) / 2}" ${FONT} text-anchor="middle" transform="rotate(-90 16 ${(top + height - bottom) / 2})">${escapeXml(yLabel)}</text>`,
  ];
  for (let i = 0; i <= 4; i += 1) {
    const y = (maxY * i) / 4;
    const x = (maxX * i) / 4;
    parts.push(`<line x1="${left}" y1="${py(y)}" x2="${width - right}" y2="${py(y)}" stroke="#eee"/>`);
    parts.push(`<text x="${left - 6}" y="${py(y) + 4}" ${FONT} text-anchor="end">${formatValue(y)}</text>`);
    parts.push(`<text x="${px(x)}" y="${height - bottom + 16}" ${FONT} text-anchor="middle">${formatValue(x)}</text>`);
  }
  series.forEach((s, index) => {
    const colour = COLOURS[index % COLOURS.length];
    const path = s.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`).join(' ');
    parts.push(`<path d="${path}" fill="none" stroke="${colour}" stroke-width="2"/>`);
    parts.push(`<rect x="${width - right + 12}" y="${top + index * 20}" width="12" height="12" fill="${colour}"/>`);
    parts.push(`<text x="${width - right + 30}" y="${top + index * 20 + 11}" ${FONT}>${escapeXml(s.label)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}
