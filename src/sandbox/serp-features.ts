import type { Rng } from './prng.js';
import { serpText } from './serp-text.js';
import type { SerpItemBody } from './serp-types.js';

const AD_HOSTS = ['www.shopnow-deals.com', 'www.getquote.io', 'www.bestpicks.store', 'www.compareit.net', 'try.acme-cloud.com'];

/**
 * Builders of the non-organic items the emulator mixes into ordinary SERPs: featured
 * snippet, people also ask, paid and related searches (result-shapes.md field sets).
 */
export const serpFeatures = {
  /** The answer box; it quotes one of the top organic results (`source`). */
  featuredSnippet(keyword: string, source: SerpItemBody, rng: Rng): SerpItemBody {
    return {
      type: 'featured_snippet',
      domain: source.domain,
      title: source.title,
      description: `${serpText.titleCase(keyword)} is ${rng.pick(['a widely used', 'a popular', 'an essential'])} choice; ${String(source.description ?? '')}`,
      url: source.url,
      breadcrumb: source.breadcrumb,
      featured_title: rng.chance(0.5) ? `What is ${keyword}?` : null,
      timestamp: null,
      images: null,
      table: null,
    };
  },

  /** Four questions, each expanded with an answer from a site of the page. */
  peopleAlsoAsk(keyword: string, sources: readonly SerpItemBody[], rng: Rng): SerpItemBody {
    return {
      type: 'people_also_ask',
      items: serpText.questions(keyword, rng).map((title, i) => {
        const src: Partial<SerpItemBody> = sources[(i + 1) % Math.max(1, sources.length)] ?? {};
        return {
          type: 'people_also_ask_element',
          title,
          seed_question: null,
          xpath: `/html[1]/body[1]/div[2]/div[2]/div[3]/div[1]/div[4]/div[1]/div[${i + 1}]`,
          expanded_element: [
            {
              type: 'people_also_ask_expanded_element',
              featured_title: null,
              url: src.url ?? null,
              domain: src.domain ?? null,
              title: src.title ?? null,
              description: `${title.replace(/\?$/, '')}: ${String(src.description ?? 'it depends on your needs.')}`,
            },
          ],
        };
      }),
    };
  },

  /** One text ad; `description_rows` as the advanced shape has them. */
  paid(keyword: string, rng: Rng): SerpItemBody {
    const host = rng.pick(AD_HOSTS);
    const path = `/lp/${serpText.slug(keyword)}`;
    return {
      type: 'paid',
      domain: host,
      title: `${serpText.titleCase(keyword)} - ${rng.pick(['Official Site', 'Up to 40% Off', 'Compare Prices', 'Free Delivery'])}`,
      url: `https://${host}${path}`,
      breadcrumb: `https://${host} › lp`,
      website_name: host.replace(/^(www|try)\./, ''),
      is_image: false,
      is_video: false,
      description: `Find ${keyword} at great prices. Order today and get fast, free shipping.`,
      description_rows: [`Shop ${keyword} today`, 'Free returns on all orders'],
      highlighted: serpText.highlighted(keyword),
      extra: null,
      description_extended: null,
      links: null,
      price: null,
      timestamp: null,
      rectangle: null,
    };
  },

  /** The block of related searches at the foot of the page. */
  relatedSearches(keyword: string, day: string, rng: Rng): SerpItemBody {
    return { type: 'related_searches', items: serpText.related(keyword, day.slice(0, 4), rng) };
  },
};
