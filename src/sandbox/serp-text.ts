import type { Rng } from './prng.js';

/**
 * Wording helpers of the simulated SERP. Kept apart from the generators so the item
 * builders stay about structure, and the text stays plausible in one place.
 */
export const serpText = {
  /** "best running shoes" → "Best Running Shoes". */
  titleCase(text: string): string {
    return text.replace(/(^|\s)(\p{L})/gu, (_, sp: string, ch: string) => sp + ch.toUpperCase());
  },

  /** A URL path segment: lower case, ASCII letters and digits joined by dashes. */
  slug(text: string, sep = '-'): string {
    const slug = text
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, sep)
      .replace(new RegExp(`^\\${sep}+|\\${sep}+$`, 'g'), '')
      .slice(0, 80);
    return slug || 'page';
  },

  /** Words of the keyword a snippet would highlight (at most three, longest first). */
  highlighted(keyword: string): string[] {
    const words = [
      ...new Set(
        keyword
          .toLowerCase()
          .split(/\s+/)
          .filter((w) => w.length > 2),
      ),
    ];
    return [keyword, ...words.sort((a, b) => b.length - a.length)].slice(0, 3);
  },

  /** Four "people also ask" questions about the keyword. */
  questions(keyword: string, rng: Rng): string[] {
    const forms = [
      `What is ${keyword}?`,
      `How does ${keyword} work?`,
      `Is ${keyword} worth it?`,
      `What is the best ${keyword}?`,
      `How much does ${keyword} cost?`,
      `Why is ${keyword} important?`,
      `How do I choose ${keyword}?`,
      `What are the benefits of ${keyword}?`,
    ];
    return pickDistinct(forms, 4, rng);
  },

  /** Eight related searches built from common modifiers (`year` is the SERP's year). */
  related(keyword: string, year: string, rng: Rng): string[] {
    const mods = ['near me', 'reviews', 'vs', 'for beginners', 'price', 'best', 'how to', 'online', year, 'cheap', 'ideas', 'guide'];
    return pickDistinct(mods, 8, rng).map((m) => (m === 'best' || m === 'how to' || m === 'cheap' ? `${m} ${keyword}` : `${keyword} ${m}`));
  },

  /** A one- or two-sentence snippet about the keyword in the voice of the site. */
  description(keyword: string, site: string, rng: Rng): string {
    const forms = [
      `Everything you need to know about ${keyword}. Compare options, read expert advice and find the right choice for you.`,
      `${serpText.titleCase(keyword)} explained: history, key facts and practical tips, updated regularly by ${site}.`,
      `Looking for ${keyword}? Browse our picks, see prices and read honest reviews before you decide.`,
      `A complete guide to ${keyword}, with step-by-step instructions, common mistakes and answers to frequent questions.`,
      `Discussions, experiences and recommendations about ${keyword} from people who have tried it.`,
      `The latest news and analysis on ${keyword}, with background and what it means for you.`,
    ];
    return rng.pick(forms);
  },
};

function pickDistinct<T>(items: readonly T[], n: number, rng: Rng): T[] {
  const pool = [...items];
  const out: T[] = [];
  while (out.length < n && pool.length > 0) {
    out.push(pool.splice(rng.int(0, pool.length - 1), 1)[0] as T);
  }
  return out;
}
