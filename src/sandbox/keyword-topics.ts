/** Topics a keyword can be about, and that a pool site can rank for. */
export type Topic =
  | 'general'
  | 'reference'
  | 'news'
  | 'shopping'
  | 'tech'
  | 'health'
  | 'finance'
  | 'food'
  | 'travel'
  | 'home'
  | 'sports'
  | 'outdoors'
  | 'entertainment'
  | 'career'
  | 'dev'
  | 'marketing';

const LEXICON: ReadonlyArray<readonly [Topic, readonly string[]]> = [
  [
    'shopping',
    ['buy', 'best', 'cheap', 'price', 'prices', 'deal', 'deals', 'sale', 'review', 'reviews', 'shoes', 'shop', 'discount', 'vs'],
  ],
  [
    'tech',
    [
      'laptop',
      'phone',
      'iphone',
      'android',
      'tv',
      'camera',
      'headphones',
      'earbuds',
      'software',
      'computer',
      'ai',
      'app',
      'monitor',
      'router',
      'tablet',
    ],
  ],
  [
    'health',
    [
      'symptoms',
      'pain',
      'diet',
      'vitamin',
      'sleep',
      'doctor',
      'treatment',
      'health',
      'disease',
      'flu',
      'weight',
      'anxiety',
      'blood',
      'protein',
    ],
  ],
  [
    'finance',
    [
      'loan',
      'loans',
      'mortgage',
      'credit',
      'bank',
      'invest',
      'investing',
      'stock',
      'stocks',
      'tax',
      'insurance',
      'savings',
      'crypto',
      'bitcoin',
      'budget',
    ],
  ],
  [
    'food',
    [
      'recipe',
      'recipes',
      'cook',
      'cooking',
      'bake',
      'pizza',
      'coffee',
      'chicken',
      'pasta',
      'cake',
      'bread',
      'soup',
      'vegan',
      'restaurant',
      'restaurants',
    ],
  ],
  [
    'travel',
    ['hotel', 'hotels', 'flight', 'flights', 'travel', 'trip', 'beach', 'visit', 'vacation', 'paris', 'london', 'tokyo', 'itinerary'],
  ],
  [
    'home',
    ['garden', 'furniture', 'sofa', 'kitchen', 'paint', 'diy', 'plant', 'plants', 'lawn', 'repair', 'mattress', 'house', 'apartment'],
  ],
  ['sports', ['running', 'run', 'bike', 'cycling', 'gym', 'fitness', 'yoga', 'football', 'soccer', 'tennis', 'marathon', 'workout']],
  ['outdoors', ['hiking', 'camping', 'tent', 'backpack', 'outdoor', 'trail', 'climbing', 'kayak']],
  ['entertainment', ['movie', 'movies', 'film', 'series', 'book', 'books', 'novel', 'actor', 'music', 'song', 'game', 'games', 'netflix']],
  ['career', ['job', 'jobs', 'salary', 'resume', 'interview', 'career', 'hiring', 'remote']],
  ['dev', ['python', 'javascript', 'typescript', 'error', 'code', 'github', 'api', 'sql', 'docker', 'linux', 'regex', 'npm']],
  ['marketing', ['seo', 'marketing', 'email', 'social', 'brand', 'advertising', 'content', 'keyword', 'keywords']],
  ['news', ['news', 'election', 'today', 'latest', 'update', 'war', 'policy']],
];

/**
 * The topics a keyword is about, from a small word list; a keyword with no known word
 * is `general`. Lets the simulated SERP for "trail running shoes" favour shops and
 * running sites over dictionaries, which keeps the data plausible for rank models.
 */
export function keywordTopics(keyword: string): Set<Topic> {
  const words = new Set(
    keyword
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean),
  );
  const topics = new Set<Topic>();
  for (const [topic, list] of LEXICON) if (list.some((w) => words.has(w))) topics.add(topic);
  if (topics.size === 0) topics.add('general');
  return topics;
}
