/** The stamp file inside a build folder. */
export const STAMP_FILE: string;
/** One line per entry under `srcDir`, in a stable order: `path mtimeMs size`. */
export function sourceStamp(srcDir: string): string;
/** Whether `distDir` holds a finished build of `srcDir` as it is now. */
export function buildIsCurrent(srcDir: string, distDir: string): boolean;
