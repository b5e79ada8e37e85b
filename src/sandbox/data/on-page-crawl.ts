import { createRng } from '../prng.js';
import { dashedServiceDate, serviceDate } from './result-input.js';

/** Pages a crawl finds when the task sets no `max_crawl_pages`. */
export const DEFAULT_CRAWL_PAGES = 60;

const SECTIONS = ['blog', 'products', 'about', 'help', 'news', 'guides'];

/** Where a crawl runs: the target's host, scheme and origin. */
interface Site {
  host: string;
  https: boolean;
  origin: string;
}

/** The simulated site behind a crawl task: pages, links and resources, stable for (seed, target). */
export function crawlSite(seed: number, target: string, maxPages: number, fetchedAt: Date) {
  const host = target.replace(/^https?:\/\//, '').replace(/\/.*$/, '');
  const https = !/^http:\/\//.test(target);
  const site: Site = { host, https, origin: `${https ? 'https' : 'http'}://${host}` };
  const urls = [`${site.origin}/`];
  for (let i = 1; i < maxPages; i++) urls.push(`${site.origin}/${SECTIONS[i % SECTIONS.length]}/${i}`);
  const pages = crawlPages(seed, site, urls, fetchedAt);
  const links = crawlLinks(seed, site, urls, pages);
  const resources = crawlResources(seed, site, maxPages, pages, fetchedAt);
  return { pages, links, resources };
}

/** One page per URL, the first the home page. */
function crawlPages(seed: number, { host, https, origin }: Site, urls: readonly string[], fetchedAt: Date) {
  return urls.map((url, i) => {
    const p = createRng(seed, 'crawl-page', url);
    const status = p.chance(0.04) ? 404 : p.chance(0.03) ? 301 : 200;
    const duration = p.int(80, 4200);
    return {
      resource_type: 'html',
      status_code: status,
      location: status === 301 ? `${origin}/` : null,
      url,
      meta: {
        title: i === 0 ? `${host} — home` : `${SECTIONS[i % SECTIONS.length]} page ${i}`,
        description: p.chance(0.2) ? null : `About ${SECTIONS[i % SECTIONS.length]} ${i}.`,
        internal_links_count: p.int(5, 80),
        external_links_count: p.int(0, 15),
        images_count: p.int(0, 20),
        content: { plain_text_word_count: p.int(50, 3000) },
      },
      page_timing: { duration_time: duration, time_to_interactive: Math.round(duration * 0.8) },
      onpage_score: Number((60 + 40 * p.next()).toFixed(2)),
      total_dom_size: p.int(20_000, 400_000),
      size: p.int(10_000, 300_000),
      encoded_size: p.int(3_000, 90_000),
      click_depth: i === 0 ? 0 : 1 + (i % 3),
      fetch_time: serviceDate(fetchedAt),
      checks: {
        is_https: https,
        is_http: !https,
        is_4xx_code: status >= 400,
        is_redirect: status === 301,
        high_loading_time: duration > 3000,
        no_description: false,
        is_www: host.startsWith('www.'),
      },
    };
  });
}

type CrawlPage = ReturnType<typeof crawlPages>[number];

/** Three anchors from each page: to the next pages of the site, or now and then to an outside page. */
function crawlLinks(seed: number, { host }: Site, urls: readonly string[], pages: readonly CrawlPage[]) {
  return pages.flatMap((page, i) => {
    const l = createRng(seed, 'crawl-links', page.url);
    return Array.from({ length: 3 }, (_, j) => {
      const external = l.chance(0.2);
      const to = external ? `https://en.wikipedia.org/wiki/Item_${l.int(1, 999)}` : urls[(i + j + 1) % urls.length]!;
      return {
        type: 'anchor',
        domain_from: host,
        domain_to: new URL(to).host,
        page_from: new URL(page.url).pathname,
        page_to: new URL(to).pathname,
        link_from: page.url,
        link_to: to,
        dofollow: !l.chance(0.1),
        direction: external ? 'external' : 'internal',
        is_broken: !external && pages[(i + j + 1) % urls.length]!.status_code === 404,
        text: `link ${j + 1}`,
      };
    });
  });
}

/** Scripts, images, stylesheets and broken resources in turn, each held by a page. */
function crawlResources(seed: number, { host, https, origin }: Site, maxPages: number, pages: readonly CrawlPage[], fetchedAt: Date) {
  const kinds = ['script', 'image', 'stylesheet', 'broken'] as const;
  return Array.from({ length: Math.max(4, Math.round(maxPages * 1.5)) }, (_, i) => {
    const kind = kinds[i % 4]!;
    const q = createRng(seed, 'crawl-res', host, i);
    const holder = pages[i % pages.length]!;
    const ext = kind === 'script' ? 'js' : kind === 'image' ? 'jpg' : kind === 'stylesheet' ? 'css' : 'png';
    const size = q.int(500, 900_000);
    const encoded = Math.round(size * (0.3 + 0.6 * q.next()));
    const duration = q.int(10, 4000);
    const image = kind === 'image';
    const shown = image ? (q.chance(0.4) ? { width: 1200, height: 800 } : { width: 600, height: 400 }) : null;
    const alt = image ? (q.chance(0.3) ? '' : `image ${i}`) : null;
    const redirect = kind !== 'stylesheet' && kind !== 'broken' && q.chance(0.1);
    return {
      resource_type: kind,
      // meta: attributes of the tag on the holding page (the spec does not show its fields)
      meta: image
        ? { alternative_text: alt, title: null, original_width: 1200, original_height: 800, width: shown!.width, height: shown!.height }
        : {},
      url: `${origin}/static/${kind}-${i}.${ext}`,
      // spec: the status of the page holding the resource, not of the resource itself
      status_code: holder.status_code,
      location: null,
      content_encoding: image ? 'none' : 'gzip',
      media_type: kind === 'script' ? 'application/javascript' : kind === 'stylesheet' ? 'text/css' : 'image/jpeg',
      accept_type: kind === 'broken' ? 'image' : kind === 'stylesheet' ? 'stylesheet' : kind === 'script' ? 'script' : 'image',
      server: 'nginx',
      from_sitemap: false,
      alternative_text: alt,
      alternative_text_variations: image && q.chance(0.3) ? [`Image ${i}`, `photo ${i}`] : [],
      title: image && q.chance(0.2) ? `Picture ${i}` : null,
      alternative_title_variations: image && q.chance(0.2) ? [`picture ${i}`] : [],
      original_width: image ? 1200 : null,
      original_height: image ? 800 : null,
      width: shown?.width ?? null,
      height: shown?.height ?? null,
      size,
      encoded_size: encoded,
      total_transfer_size: encoded + 300,
      fetch_time: dashedServiceDate(fetchedAt),
      fetch_timing: { duration_time: duration, fetch_start: 0, fetch_end: duration },
      cache_control: { cachable: kind !== 'broken', ttl: kind === 'broken' ? 0 : 86_400_000 },
      checks: {
        no_content_encoding: image,
        high_loading_time: duration > 3000,
        is_redirect: false,
        is_4xx_code: kind === 'broken',
        is_5xx_code: false,
        is_broken: kind === 'broken',
        is_www: host.startsWith('www.'),
        is_https: https,
        is_http: !https,
        original_size_displayed: image && shown!.width === 1200,
        is_minified: kind === 'script' || kind === 'stylesheet' ? q.chance(0.7) : false,
        has_redirect: redirect,
        has_subrequests: kind === 'stylesheet' || kind === 'script' ? q.chance(0.3) : false,
      },
      resource_errors: {
        errors: kind === 'broken' ? [{ line: 0, column: 0, message: 'Resource not found.', status_code: 0 }] : [],
        warnings: [],
      },
      last_modified: { header: null, sitemap: null, meta_tag: null },
      found_on: holder.url,
    };
  });
}
