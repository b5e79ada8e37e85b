import type { LocalFile } from './local-layout.js';
import type { ManifestEntry } from './manifest.js';

/** A local file with the SHA-256 of its bytes. */
export interface HashedFile extends LocalFile {
  sha256: string;
}

/** What a sync has to do, decided before any byte is sent. */
export interface SyncPlan {
  /** Already in the lake with these bytes. */
  skip: HashedFile[];
  /** Missing, of another size, or recorded with other bytes: to upload. */
  upload: HashedFile[];
  /** An object of the same size that the manifest does not vouch for (an interrupted sync): read its `sha256` metadata first. */
  verify: HashedFile[];
  /** Keys of the layout in the lake that are gone locally: deleted once the manifest no longer lists them. */
  remove: string[];
}

/**
 * The SHA-256 the manifest recorded for a file whose size and modification time have not
 * changed since, so an unchanged history is not read again each night (the cost of a sync
 * follows what the night wrote, not the whole lake).
 */
export function recordedSha(file: LocalFile, manifest: Record<string, ManifestEntry>): string | undefined {
  const m = manifest[file.rel];
  return m && m.size === file.size && m.mtime_ms === file.mtimeMs ? m.sha256 : undefined;
}

/**
 * Decides per key: skip when the listing shows the object at the local size and the
 * manifest recorded the same bytes; verify when the size matches but the manifest does
 * not vouch for it; upload otherwise. The listing is the check that the object is still
 * there; the manifest is the check of its bytes (ETags are not content hashes for
 * multipart or encrypted objects, so they are not compared).
 */
export function planSync(
  local: readonly HashedFile[],
  manifest: Record<string, ManifestEntry>,
  remote: ReadonlyMap<string, number>,
): SyncPlan {
  const plan: SyncPlan = { skip: [], upload: [], verify: [], remove: [] };
  const here = new Set<string>();
  for (const f of local) {
    here.add(f.rel);
    const size = remote.get(f.rel);
    if (size !== f.size) plan.upload.push(f);
    else if (manifest[f.rel]?.sha256 === f.sha256) plan.skip.push(f);
    else plan.verify.push(f);
  }
  for (const key of remote.keys()) if (!here.has(key)) plan.remove.push(key);
  plan.remove.sort();
  return plan;
}
