#!/usr/bin/env node
// Entry point for the `pipeline` command: registers the TypeScript loader
// (tsx, installed with the package, nothing fetched at run time) and hands over to src/bin.ts.
import { register } from 'tsx/esm/api';

register();
await import('../src/bin.ts');
