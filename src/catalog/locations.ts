/**
 * Reference data of the locations and languages the tool names: the report's location names
 * and the emulator's locations lists read the same table.
 */

/** A country of the locations lists. */
export interface Country {
  code: number;
  name: string;
  gl: string;
  language: string;
}

/** The countries the emulator knows (locations lists, default languages). */
export const COUNTRIES: readonly Country[] = [
  { code: 2840, name: 'United States', gl: 'us', language: 'en' },
  { code: 2826, name: 'United Kingdom', gl: 'gb', language: 'en' },
  { code: 2124, name: 'Canada', gl: 'ca', language: 'en' },
  { code: 2036, name: 'Australia', gl: 'au', language: 'en' },
  { code: 2356, name: 'India', gl: 'in', language: 'en' },
  { code: 2276, name: 'Germany', gl: 'de', language: 'de' },
  { code: 2250, name: 'France', gl: 'fr', language: 'fr' },
  { code: 2724, name: 'Spain', gl: 'es', language: 'es' },
  { code: 2380, name: 'Italy', gl: 'it', language: 'it' },
  { code: 2528, name: 'Netherlands', gl: 'nl', language: 'nl' },
  { code: 2076, name: 'Brazil', gl: 'br', language: 'pt' },
  { code: 2392, name: 'Japan', gl: 'jp', language: 'ja' },
];

/** Language names (lower case) to codes. */
export const LANGUAGES: Readonly<Record<string, string>> = {
  english: 'en',
  german: 'de',
  french: 'fr',
  spanish: 'es',
  italian: 'it',
  dutch: 'nl',
  portuguese: 'pt',
  japanese: 'ja',
};
