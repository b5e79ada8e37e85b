import type { Topic } from './keyword-topics.js';

/** How a site shapes its URLs, titles and snippets in the simulated SERP. */
export type SiteStyle = 'wiki' | 'forum' | 'shop' | 'news' | 'video' | 'guide' | 'recipe' | 'reference' | 'review';

/** One site the simulated SERPs draw from. */
export interface PoolSite {
  domain: string;
  name: string;
  /** Whether the site is served on `www.` (the result's `domain` then carries it). */
  www: boolean;
  /** 0..1, how strongly the site ranks regardless of the keyword. */
  authority: number;
  style: SiteStyle;
  /** Topics the site ranks for; a keyword of the same topic lifts it (see keyword-topics.ts). */
  topics: readonly Topic[];
}

const s = (domain: string, name: string, www: boolean, authority: number, style: SiteStyle, topics: Topic[]): PoolSite => ({
  domain,
  name,
  www,
  authority,
  style,
  topics,
});

/**
 * About sixty realistic sites, general and niche. A fixed pool keeps domain-level
 * models (share of voice, rank history) meaningful across keywords and days.
 */
export const DOMAIN_POOL: readonly PoolSite[] = [
  s('en.wikipedia.org', 'Wikipedia', false, 0.95, 'wiki', ['general', 'reference']),
  s('amazon.com', 'Amazon.com', true, 0.9, 'shop', ['shopping', 'tech', 'home']),
  s('reddit.com', 'Reddit', true, 0.88, 'forum', ['general']),
  s('youtube.com', 'YouTube', true, 0.87, 'video', ['general', 'entertainment']),
  s('nytimes.com', 'The New York Times', true, 0.82, 'news', ['news', 'general', 'food']),
  s('theguardian.com', 'The Guardian', true, 0.78, 'news', ['news']),
  s('bbc.com', 'BBC', true, 0.8, 'news', ['news']),
  s('forbes.com', 'Forbes', true, 0.76, 'news', ['finance', 'news', 'career']),
  s('medium.com', 'Medium', false, 0.66, 'guide', ['dev', 'marketing', 'general']),
  s('quora.com', 'Quora', true, 0.7, 'forum', ['general']),
  s('stackoverflow.com', 'Stack Overflow', false, 0.72, 'forum', ['dev']),
  s('github.com', 'GitHub', false, 0.74, 'reference', ['dev']),
  s('britannica.com', 'Britannica', true, 0.75, 'reference', ['reference', 'general']),
  s('investopedia.com', 'Investopedia', true, 0.7, 'guide', ['finance']),
  s('healthline.com', 'Healthline', true, 0.71, 'guide', ['health', 'food']),
  s('mayoclinic.org', 'Mayo Clinic', true, 0.77, 'reference', ['health']),
  s('webmd.com', 'WebMD', true, 0.69, 'reference', ['health']),
  s('nih.gov', 'National Institutes of Health', true, 0.79, 'reference', ['health']),
  s('cnn.com', 'CNN', true, 0.74, 'news', ['news']),
  s('washingtonpost.com', 'The Washington Post', true, 0.73, 'news', ['news']),
  s('reuters.com', 'Reuters', true, 0.72, 'news', ['news', 'finance']),
  s('bloomberg.com', 'Bloomberg', true, 0.7, 'news', ['finance', 'news']),
  s('theverge.com', 'The Verge', true, 0.65, 'news', ['tech']),
  s('wired.com', 'WIRED', true, 0.64, 'news', ['tech']),
  s('techcrunch.com', 'TechCrunch', false, 0.62, 'news', ['tech']),
  s('cnet.com', 'CNET', true, 0.66, 'review', ['tech', 'shopping']),
  s('pcmag.com', 'PCMag', true, 0.63, 'review', ['tech']),
  s('tomsguide.com', "Tom's Guide", true, 0.6, 'review', ['tech', 'shopping']),
  s('rtings.com', 'RTINGS.com', true, 0.55, 'review', ['tech', 'shopping']),
  s('nerdwallet.com', 'NerdWallet', true, 0.62, 'guide', ['finance']),
  s('bankrate.com', 'Bankrate', true, 0.6, 'guide', ['finance']),
  s('zillow.com', 'Zillow', true, 0.61, 'shop', ['home', 'finance']),
  s('tripadvisor.com', 'Tripadvisor', true, 0.67, 'review', ['travel', 'food']),
  s('booking.com', 'Booking.com', true, 0.66, 'shop', ['travel']),
  s('yelp.com', 'Yelp', true, 0.64, 'review', ['food', 'travel', 'home']),
  s('etsy.com', 'Etsy', true, 0.63, 'shop', ['shopping', 'home']),
  s('ebay.com', 'eBay', true, 0.68, 'shop', ['shopping']),
  s('walmart.com', 'Walmart.com', true, 0.67, 'shop', ['shopping', 'food']),
  s('target.com', 'Target', true, 0.6, 'shop', ['shopping', 'home']),
  s('bestbuy.com', 'Best Buy', true, 0.61, 'shop', ['shopping', 'tech']),
  s('homedepot.com', 'The Home Depot', true, 0.58, 'shop', ['home']),
  s('ikea.com', 'IKEA', true, 0.57, 'shop', ['home']),
  s('allrecipes.com', 'Allrecipes', true, 0.62, 'recipe', ['food']),
  s('seriouseats.com', 'Serious Eats', true, 0.56, 'recipe', ['food']),
  s('bonappetit.com', 'Bon Appétit', true, 0.54, 'recipe', ['food']),
  s('smittenkitchen.com', 'smitten kitchen', false, 0.42, 'recipe', ['food']),
  s('nationalgeographic.com', 'National Geographic', true, 0.66, 'reference', ['reference', 'travel', 'outdoors']),
  s('merriam-webster.com', 'Merriam-Webster', true, 0.7, 'reference', ['reference']),
  s('dictionary.cambridge.org', 'Cambridge Dictionary', false, 0.65, 'reference', ['reference']),
  s('imdb.com', 'IMDb', true, 0.7, 'reference', ['entertainment']),
  s('goodreads.com', 'Goodreads', true, 0.6, 'review', ['entertainment']),
  s('linkedin.com', 'LinkedIn', true, 0.69, 'guide', ['career', 'marketing']),
  s('indeed.com', 'Indeed', true, 0.64, 'guide', ['career']),
  s('hubspot.com', 'HubSpot Blog', false, 0.58, 'guide', ['marketing']),
  s('outdoorgearlab.com', 'OutdoorGearLab', true, 0.4, 'review', ['outdoors', 'sports', 'shopping']),
  s('bikeradar.com', 'BikeRadar', true, 0.41, 'review', ['sports']),
  s('runnersworld.com', "Runner's World", true, 0.47, 'guide', ['sports', 'health']),
  s('dpreview.com', 'DPReview', true, 0.44, 'review', ['tech']),
  s('thespruce.com', 'The Spruce', true, 0.52, 'guide', ['home', 'food']),
  s('wikihow.com', 'wikiHow', true, 0.6, 'guide', ['general', 'home']),
  s('lonelyplanet.com', 'Lonely Planet', true, 0.55, 'guide', ['travel']),
  s('gardenersworld.com', "Gardeners' World", true, 0.38, 'guide', ['home', 'outdoors']),
];
