import { z } from 'zod';
import { pipelineSchema } from './schema.js';

/**
 * JSON Schema of a pipeline file as users write it (`io: 'input'`: defaults optional),
 * for editor completion and hover docs, e.g. with the YAML language server's
 * `# yaml-language-server: $schema=...` comment. Generated from the zod schema, so it
 * never drifts from what `parsePipeline` accepts.
 */
export function pipelineJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(pipelineSchema, { io: 'input' }) as Record<string, unknown>;
}

/** The schema as the file `config/pipeline.schema.json` holds it (stable formatting). */
export function pipelineJsonSchemaText(): string {
  return `${JSON.stringify({ ...pipelineJsonSchema(), title: 'pipeline file' }, null, 2)}\n`;
}
