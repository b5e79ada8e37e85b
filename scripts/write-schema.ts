// Writes config/pipeline.schema.json from the zod schema and docs/schema.md from the table
// declarations and the marts' sidecars (`npm run schema`). Tests fail when a committed file
// differs from what this would write.
import { writeFile } from 'node:fs/promises';
import { pipelineJsonSchemaText } from '../src/config/index.js';
import { martsMarkdownOf } from '../src/models/index.js';
import { schemaMarkdown } from '../src/warehouse/index.js';

await writeFile(new URL('../config/pipeline.schema.json', import.meta.url), pipelineJsonSchemaText());
process.stdout.write('wrote config/pipeline.schema.json\n');
await writeFile(new URL('../docs/schema.md', import.meta.url), schemaMarkdown(await martsMarkdownOf()));
process.stdout.write('wrote docs/schema.md\n');
