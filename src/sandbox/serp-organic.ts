import type { PoolSite } from './domain-pool.js';
import { createRng, type Rng } from './prng.js';
import type { SerpQuery } from './serp-query.js';
import { serpText } from './serp-text.js';
import type { SerpItemBody } from './serp-types.js';

/** Words that tell a site's deeper pages apart from its best page for the keyword. */
const PAGE_TOPICS = ['', 'guide', 'tips', 'review', 'history', 'faq', 'ideas', 'comparison', 'basics', 'examples', 'alternatives', 'news'];

/**
 * One organic result with the advanced field set of result-shapes.md. Text and URL are
 * fixed per (seed, keyword, site, page); only the timestamp follows the day, so a site's
 * result reads the same while its rank moves.
 */
export function buildOrganicItem(site: PoolSite, page: number, rankGroup: number, q: SerpQuery, seed: number): SerpItemBody {
  const rng = createRng(seed, 'organic', q.keyword.toLowerCase(), site.domain, page);
  const topic = [q.keyword, PAGE_TOPICS[page % PAGE_TOPICS.length], page >= PAGE_TOPICS.length ? String(page) : '']
    .filter(Boolean)
    .join(' ');
  const host = site.www ? `www.${site.domain}` : site.domain;
  const published = publishedAt(q.day, createRng(seed, 'published', q.keyword.toLowerCase(), site.domain, page));
  const path = pathFor(site, topic, published, rng);
  const url = `https://${host}${path}`;
  const dated = site.style === 'news' || site.style === 'forum' || site.style === 'video';
  return {
    type: 'organic',
    domain: host,
    title: titleFor(site, topic, q.day.slice(0, 4), rng),
    url,
    breadcrumb: breadcrumb(host, path),
    website_name: site.name,
    is_image: false,
    is_video: site.style === 'video',
    is_featured_snippet: false,
    is_malicious: false,
    is_web_story: false,
    description: serpText.description(topic, site.name, rng),
    pre_snippet: null,
    extended_snippet: null,
    amp_version: site.style === 'news' && rng.chance(0.4),
    rating: hasRating(site, rng) ? rating(rng) : null,
    highlighted: serpText.highlighted(q.keyword),
    links: rankGroup <= 2 && site.authority > 0.6 && rng.chance(0.5) ? sitelinks(host, rng) : null,
    faq: site.style === 'guide' && rng.chance(0.1) ? faq(q.keyword, rng) : null,
    images: null,
    timestamp: dated ? `${published.toISOString().slice(0, 19).replace('T', ' ')} +00:00` : null,
    rectangle: null,
  };
}

function pathFor(site: PoolSite, topic: string, published: Date, rng: Rng): string {
  const slug = serpText.slug(topic);
  const id = (n: number) => Array.from({ length: n }, () => rng.pick([...'abcdefghijklmnopqrstuvwxyz0123456789'])).join('');
  switch (site.domain) {
    case 'reddit.com':
      return `/r/${rng.pick(['AskReddit', 'BuyItForLife', 'explainlikeimfive', 'NoStupidQuestions', 'HomeImprovement'])}/comments/${id(6)}/${serpText.slug(topic, '_')}/`;
    case 'quora.com':
      return `/What-is-the-best-${serpText.titleCase(topic).replace(/[^A-Za-z0-9]+/g, '-')}`;
    case 'stackoverflow.com':
      return `/questions/${rng.int(1_000_000, 79_999_999)}/${slug}`;
    case 'youtube.com':
      return `/watch?v=${id(11)}`;
    case 'amazon.com':
      return `/${serpText.titleCase(topic).replace(/[^A-Za-z0-9]+/g, '-')}/dp/B0${id(8).toUpperCase()}`;
  }
  switch (site.style) {
    case 'wiki':
      return `/wiki/${serpText.titleCase(topic).replace(/\s+/g, '_')}`;
    case 'forum':
      return `/t/${slug}/${rng.int(1000, 999_999)}`;
    case 'shop':
      return `/${rng.pick(['c', 'b', 'browse', 'shop'])}/${slug}`;
    case 'news':
      return `/${published.toISOString().slice(0, 10).replace(/-/g, '/')}/${rng.pick(['business', 'technology', 'world', 'lifestyle', 'science'])}/${slug}.html`;
    case 'recipe':
      return `/recipe/${rng.int(10_000, 299_999)}/${slug}/`;
    case 'reference':
      return `/${rng.pick(['topic', 'dictionary', 'article', 'health'])}/${slug}`;
    case 'review':
      return `/${rng.pick(['best', 'reviews', 'buying-guide'])}/${slug}`;
    default:
      return `/${rng.pick(['blog', 'guides', 'learn', 'articles'])}/${slug}`;
  }
}

function titleFor(site: PoolSite, topic: string, year: string, rng: Rng): string {
  const t = serpText.titleCase(topic);
  const plain = topic.replace(/^best\s+/i, '');
  switch (site.style) {
    case 'wiki':
      return `${t} - ${site.name}`;
    case 'forum':
      return rng.pick([`What is the best ${plain}? - ${site.name}`, `${t}: any recommendations? : ${site.name}`]);
    case 'shop':
      return rng.pick([`${t} : ${site.name}`, `Shop ${t} | ${site.name}`]);
    case 'news':
      return rng.pick([`${t}: What to Know - ${site.name}`, `Why ${t} Matters Now | ${site.name}`]);
    case 'video':
      return `${t} - Everything You Need to Know - ${site.name}`;
    case 'recipe':
      return `Best ${serpText.titleCase(plain)} Recipe - ${site.name}`;
    case 'reference':
      return `${t} | Definition, Facts & Uses | ${site.name}`;
    case 'review':
      return `The 10 Best ${serpText.titleCase(plain)} of ${year} - ${site.name}`;
    default:
      return rng.pick([`${t}: A Complete Guide - ${site.name}`, `How to Choose ${t} - ${site.name}`]);
  }
}

function breadcrumb(host: string, path: string): string {
  const segs = path.split(/[/?]/).filter(Boolean).slice(0, 3);
  return [`https://${host}`, ...segs.map((s) => (s.length > 24 ? `${s.slice(0, 24)}...` : s))].join(' › ');
}

function hasRating(site: PoolSite, rng: Rng): boolean {
  return (site.style === 'shop' || site.style === 'recipe' || site.style === 'review') && rng.chance(0.5);
}

function rating(rng: Rng) {
  return { rating_type: 'Max5', value: rng.int(35, 50) / 10, votes_count: rng.int(3, 25_000), rating_max: 5 };
}

function sitelinks(host: string, rng: Rng) {
  const names = ['About', 'Contact', 'Best sellers', 'Latest', 'Guides', 'Help', 'Pricing', 'Reviews'];
  const start = rng.int(0, names.length - 1);
  return Array.from({ length: 4 }, (_, i) => {
    const title = names[(start + i) % names.length] ?? 'More';
    return { type: 'link_element', title, description: null, url: `https://${host}/${serpText.slug(title)}`, domain: host };
  });
}

function faq(keyword: string, rng: Rng) {
  return {
    type: 'faq_box',
    items: serpText
      .questions(keyword, rng)
      .slice(0, 2)
      .map((title) => ({
        type: 'faq_box_element',
        title,
        description: `In short: it depends on what you need from ${keyword}. Our guide walks through the main options.`,
        links: null,
      })),
  };
}

/**
 * A fixed publication moment per page (so its URL is stable across days), moved to a
 * month before the SERP's day only when it would otherwise lie in the future.
 */
function publishedAt(day: string, rng: Rng): Date {
  const at = new Date(Date.UTC(2019, 0, 1) + rng.int(0, 2400) * 86_400_000 + rng.int(6, 20) * 3_600_000);
  const dayMs = Date.parse(`${day}T00:00:00Z`);
  return at.getTime() < dayMs ? at : new Date(dayMs - 30 * 86_400_000 + rng.int(6, 20) * 3_600_000);
}
