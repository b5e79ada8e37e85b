import type { LakeOutcome } from './sync-lake.js';

/** One line for a person: `lake s3://b/p/: 3 uploaded (1.2 MB, 1 multipart), 40 unchanged, 2 deleted in 0.8 s`. */
export function formatLakeOutcome(o: LakeOutcome): string {
  const parts = [
    `${o.uploaded.files} uploaded (${mb(o.uploaded.bytes)}${o.uploaded.multipart ? `, ${o.uploaded.multipart} multipart` : ''})`,
    `${o.skipped.files} unchanged`,
    `${o.deleted.files} deleted`,
  ];
  const state = o.committed ? '' : '; NOT committed (the manifest and deletions wait for the next sync)';
  const failed = o.failed.length
    ? `; ${o.failed.length} failed: ${o.failed
        .slice(0, 3)
        .map((f) => `${f.op} ${f.key}: ${f.message}`)
        .join('; ')}`
    : '';
  return `lake ${o.url}: ${parts.join(', ')} in ${(o.ms / 1000).toFixed(1)} s${state}${failed}`;
}

function mb(bytes: number): string {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${(bytes / 1e3).toFixed(1)} kB`;
}
