import { describe, expect, it } from 'vitest';
import { pipelineJsonSchema } from '../../../src/config/index.js';

describe('pipelineJsonSchema', () => {
  it('describes the file as users write it, for editors', () => {
    const schema = pipelineJsonSchema();
    expect(typeof schema).toBe('object');
    const properties = schema.properties as Record<string, Record<string, unknown>>;
    expect(properties.jobs).toBeTypeOf('object');
    expect(properties.jobs!.type).toBe('array');
    expect(schema.required).toEqual(['name', 'jobs']);
    expect(schema.additionalProperties).toBe(false);
    expect(properties.name!.description).toMatch(/Pipeline name/);
  });

  it('leaves defaulted job fields optional and documents them', () => {
    const jobs = (pipelineJsonSchema().properties as Record<string, { items: { oneOf: Array<Record<string, unknown>> } }>).jobs!;
    const serp = jobs.items.oneOf[0]!;
    expect(serp.required).toEqual(['kind', 'locations']); // keywords inline or from keywords_file
    const depth = (serp.properties as Record<string, Record<string, unknown>>).depth!;
    // A number of results, or `auto` (depth chosen per series: issue 46).
    expect(depth).toMatchObject({
      default: 10,
      anyOf: [
        { maximum: 700, minimum: 1, type: 'integer' },
        { const: 'auto', type: 'string' },
      ],
    });
    expect(depth.description).toBeTypeOf('string');
  });
});

describe('config/pipeline.schema.json', () => {
  it('is the schema the code generates (run `npm run schema` after changing the zod schema)', async () => {
    const { readFile } = await import('node:fs/promises');
    const { pipelineJsonSchemaText } = await import('../../../src/config/index.js');
    const committed = await readFile(new URL('../../../config/pipeline.schema.json', import.meta.url), 'utf8');
    expect(committed).toBe(pipelineJsonSchemaText());
  });
});
