import type { Rng } from './prng.js';
import { serpText } from './serp-text.js';
import type { SerpItemBody } from './serp-types.js';

const MEDIA_SOURCES = [
  { source: 'BBC', domain: 'www.bbc.com' },
  { source: 'The Guardian', domain: 'www.theguardian.com' },
  { source: 'YouTube', domain: 'www.youtube.com' },
  { source: 'Reuters', domain: 'www.reuters.com' },
  { source: 'CNET', domain: 'www.cnet.com' },
];

/**
 * Builders of the rarer item types (local pack, stories, video, images, AI overview,
 * knowledge graph). They appear in the full sample and, for video, in some SERPs, so a
 * loader meets every type result-shapes.md lists.
 */
export const serpMedia = {
  /** `top_stories`, `video` or `images`: a carousel of dated media items. */
  carousel(type: 'top_stories' | 'video' | 'images', keyword: string, day: string, rng: Rng): SerpItemBody {
    const elementType = { top_stories: 'top_stories_element', video: 'video_element', images: 'images_element' }[type];
    return {
      type,
      items: Array.from({ length: 3 }, (_, i) => {
        const m = MEDIA_SOURCES[(rng.int(0, MEDIA_SOURCES.length - 1) + i) % MEDIA_SOURCES.length] ?? MEDIA_SOURCES[0]!;
        const slug = serpText.slug(keyword);
        return {
          type: elementType,
          source: m.source,
          domain: m.domain,
          title: `${serpText.titleCase(keyword)} ${['explained', 'in pictures', 'update'][i]}`,
          date: `${rng.int(1, 23)} hours ago`,
          timestamp: `${day} ${String(rng.int(0, 11)).padStart(2, '0')}:${String(rng.int(0, 59)).padStart(2, '0')}:00 +00:00`,
          url: `https://${m.domain}/${type}/${slug}-${i + 1}`,
          image_url: `https://${m.domain}/img/${slug}-${i + 1}.jpg`,
        };
      }),
    };
  },

  /** A local pack entry (one business). */
  localPack(keyword: string, rng: Rng): SerpItemBody {
    const name = `${serpText.titleCase(keyword.split(/\s+/)[0] ?? keyword)} ${rng.pick(['Store', 'Center', 'Studio', 'Shop'])}`;
    return {
      type: 'local_pack',
      title: name,
      description: `${rng.int(1, 9)}.${rng.int(0, 9)} mi · Open until ${rng.int(5, 10)} PM`,
      domain: `www.${serpText.slug(name, '')}.com`,
      phone: `+1 555-${String(rng.int(100, 999))}-${String(rng.int(1000, 9999))}`,
      url: `https://www.${serpText.slug(name, '')}.com/`,
      is_paid: false,
      rating: { rating_type: 'Max5', value: rng.int(38, 50) / 10, votes_count: rng.int(5, 900), rating_max: 5 },
      cid: String(rng.int(1_000_000_000, 2_000_000_000)) + String(rng.int(100_000_000, 999_999_999)),
    };
  },

  /** The generated overview at the top, citing organic results. */
  aiOverview(keyword: string, sources: readonly SerpItemBody[]): SerpItemBody {
    return {
      type: 'ai_overview',
      asynchronous_ai_overview: false,
      items: [
        {
          type: 'ai_overview_element',
          title: null,
          text: `${serpText.titleCase(keyword)} covers several options. Most sources recommend comparing needs, budget and reviews before deciding.`,
          links: null,
          references: null,
        },
      ],
      references: sources.slice(0, 3).map((s) => ({
        type: 'ai_overview_reference',
        source: s.website_name ?? null,
        domain: s.domain ?? null,
        url: s.url ?? null,
        title: s.title ?? null,
        text: s.description ?? null,
      })),
    };
  },

  /** The knowledge panel on the right. */
  knowledgeGraph(keyword: string, day: string, rng: Rng): SerpItemBody {
    const title = serpText.titleCase(keyword);
    return {
      type: 'knowledge_graph',
      position: 'right',
      title,
      subtitle: rng.pick(['Topic', 'Product category', 'Concept']),
      description: `${title} is a subject with a long history and many everyday uses.`,
      card_id: `/m/0${rng.int(10_000, 99_999)}`,
      url: `https://en.wikipedia.org/wiki/${title.replace(/\s+/g, '_')}`,
      image_url: null,
      logo_url: null,
      cid: null,
      items: [
        { type: 'knowledge_graph_description_item', text: `${title} is a subject with a long history.`, links: null },
        {
          type: 'knowledge_graph_row_item',
          title: 'Related',
          data_attrid: null,
          text: serpText.related(keyword, day.slice(0, 4), rng).slice(0, 3).join(', '),
        },
      ],
    };
  },
};
