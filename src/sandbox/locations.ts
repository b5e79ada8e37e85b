/**
 * The countries and languages the emulator's simulated locations lists name. The spec shows
 * the lists' endpoints and their `location_code` / `location_name` fields, not their content:
 * these are the emulator's own sample (codes in the service's 2xxx country scheme).
 */

/** A country of the locations lists. */
export interface Country {
  code: number;
  name: string;
  gl: string;
  language: string;
}

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
