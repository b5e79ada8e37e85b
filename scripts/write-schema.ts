// Writes config/pipeline.schema.json from the zod schema (`npm run schema`).
// A test fails when the committed file differs from what this would write.
import { writeFile } from 'node:fs/promises';
import { pipelineJsonSchemaText } from '../src/config/index.js';

await writeFile(new URL('../config/pipeline.schema.json', import.meta.url), pipelineJsonSchemaText());
process.stdout.write('wrote config/pipeline.schema.json\n');
