/**
 * Shapes of the simulated SERP organic result (result-shapes.md, "SERP organic
 * task_get/advanced"). Items keep an open index signature because the loader must cope
 * with fields it does not know, and so must code that reads the emulator's output.
 */

/** An item before it has its place on the page. */
export interface SerpItemBody {
  type: string;
  /** Defaults to `left`; knowledge panels sit on the right. */
  position?: 'left' | 'right';
  [field: string]: unknown;
}

/**
 * An item placed on the page: every item carries these five fields. Ranks are numbers,
 * written as strings now and then on non-organic items, as real bodies do (serp-drift.ts).
 */
export interface SerpItem extends SerpItemBody {
  rank_group: number | string;
  rank_absolute: number | string;
  position: 'left' | 'right';
  xpath: string;
}

/** `tasks[].result[0]` of `task_get/advanced` and `live/advanced`. */
export interface SerpAdvancedResult {
  keyword: string;
  type: 'organic';
  se_domain: string;
  location_code: number | null;
  language_code: string;
  check_url: string;
  datetime: string;
  spell: { keyword: string; type: string } | null;
  refinement_chips: unknown[] | null;
  item_types: string[];
  se_results_count: number;
  items_count: number;
  items: SerpItem[];
}
