import type { SerpAdvancedResult, SerpItem } from './serp-types.js';

/** Fields an item keeps in the `regular` format. */
const REGULAR_FIELDS = [
  'type',
  'rank_group',
  'rank_absolute',
  'position',
  'xpath',
  'domain',
  'title',
  'url',
  'breadcrumb',
  'description',
  'is_image',
  'is_video',
];

/**
 * The three `task_get` formats read one stored advanced result, so a task paid for once
 * answers all three consistently (v3 notes: "all three SERP formats readable by GET
 * after one paid POST").
 */
export const serpFormats = {
  /** `regular`: organic and paid items only, with the short field set. */
  regular(result: SerpAdvancedResult) {
    const items = result.items
      .filter((i) => i.type === 'organic' || i.type === 'paid')
      .map((i) => Object.fromEntries(REGULAR_FIELDS.filter((f) => f in i).map((f) => [f, i[f]])));
    return {
      ...result,
      item_types: [...new Set(items.map((i) => String(i.type)))],
      items_count: items.length,
      items,
    };
  },

  /** `html`: one page of markup in `items[0].html`. */
  html(result: SerpAdvancedResult) {
    const { keyword, type, se_domain, location_code, language_code, datetime } = result;
    return {
      keyword,
      type,
      se_domain,
      location_code,
      language_code,
      datetime,
      items_count: 1,
      items: [{ page: 1, date: datetime, html: renderHtml(result) }],
    };
  },
};

function renderHtml(result: SerpAdvancedResult): string {
  const body = result.items.map(renderItem).join('\n');
  return [
    '<!doctype html>',
    `<html lang="${esc(result.language_code)}"><head><meta charset="utf-8"><title>${esc(result.keyword)} - Search</title></head>`,
    `<body><div id="result-stats">About ${result.se_results_count.toLocaleString('en-US')} results</div>`,
    `<div id="search">\n${body}\n</div></body></html>`,
  ].join('\n');
}

function renderItem(item: SerpItem): string {
  const attrs = `class="${esc(item.type)}" data-rank="${item.rank_absolute}"`;
  if (typeof item.url === 'string' && typeof item.title === 'string') {
    return `<div ${attrs}><a href="${esc(item.url)}"><h3>${esc(item.title)}</h3></a><cite>${esc(String(item.breadcrumb ?? ''))}</cite><span>${esc(String(item.description ?? ''))}</span></div>`;
  }
  const texts = Array.isArray(item.items)
    ? item.items.map((x) => (typeof x === 'string' ? x : String((x as { title?: unknown }).title ?? '')))
    : [];
  return `<div ${attrs}>${texts.map((t) => `<span>${esc(t)}</span>`).join('')}</div>`;
}

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}
