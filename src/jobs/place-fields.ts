import { z } from 'zod';

/**
 * Where and in which language a job asks, and which domains it asks about: the field
 * blocks most job kinds repeat, declared once.
 */

const LANGUAGE_CODE = /^[a-z]{2,3}(-[a-z]{2,4})?$/i;
const LANGUAGE_NAME = /^\p{L}[\p{L} ().'-]*$/u;

/** One location: a positive `location_code` or a `location_name`. */
export const locationSchema = z.union(
  [
    z.number().int('a location_code is a whole number').positive('a location_code is a positive integer'),
    z.string().trim().min(1, 'a location_name must not be empty'),
  ],
  { error: 'a positive integer location_code or a non-empty location_name' },
);

/** One language: a code (`en`, `pt-br`) or a name (`English`). */
export const languageSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .refine((s) => LANGUAGE_CODE.test(s) || LANGUAGE_NAME.test(s), {
    error: "a language code like 'en' or 'pt-br', or a language name like 'English'",
  });

/** A domain or page a job asks about (labs, backlinks, keywords for site, on-page). */
export const targetSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(255, 'at most 255 characters')
  .refine((s) => !/\s/.test(s), { error: "a domain or URL without spaces, like 'example.com'" });

/** At least one location (the data kinds' `locations`). */
export const locationsField = z
  .array(locationSchema)
  .min(1, 'at least one location')
  .describe('A location_code (e.g. 2840) or a location_name.');

/** Locations that may be left out (trends). */
export const optionalLocationsField = z
  .array(locationSchema)
  .default([])
  .describe('Location codes or names; none means the service default (worldwide where it has one).');

/** At least one language, English by default. */
export const languagesField = z
  .array(languageSchema)
  .min(1, 'at least one language')
  .default(['en'])
  .describe("A language code ('en') or name ('English').");

/** At least one target domain or page. */
export const targetsField = z
  .array(targetSchema)
  .min(1, 'at least one target')
  .describe("Domains or pages to ask about, e.g. 'example.com'.");
