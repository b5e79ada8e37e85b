import { describe, expect, it } from 'vitest';
import { resolveLake } from '../../../src/config/lake.js';
import { parsePipeline } from '../../../src/config/index.js';
import { EtlError } from '../../../src/errors.js';
import { parseLakeAddress } from '../../../src/lake/lake-address.js';
import { lakeError } from '../../../src/lake/lake-error.js';

describe('parseLakeAddress', () => {
  it('splits bucket and prefix, the prefix ending in one slash', () => {
    expect(parseLakeAddress('s3://analytics/serp/nightly')).toEqual({
      url: 's3://analytics/serp/nightly/',
      bucket: 'analytics',
      prefix: 'serp/nightly/',
    });
    expect(parseLakeAddress('s3://analytics/serp/')).toMatchObject({ prefix: 'serp/' });
    expect(parseLakeAddress('s3://analytics')).toEqual({ url: 's3://analytics/', bucket: 'analytics', prefix: '' });
  });

  it.each([
    ['https://analytics/serp', 'expected s3://'],
    ['s3://Analytics/x', 'not a valid S3 bucket name'],
    ['s3://ab/x', 'not a valid S3 bucket name'],
    ['s3://analytics//x', "empty, '.' or '..'"],
    ['s3://analytics/a/../b', "empty, '.' or '..'"],
  ])('refuses %s with ETL_LAKE_CONFIG', (url, rule) => {
    const err = (() => {
      try {
        parseLakeAddress(url);
      } catch (e) {
        return e as EtlError;
      }
      throw new Error('accepted');
    })();
    expect(err.code).toBe('ETL_LAKE_CONFIG');
    expect(err.message).toContain(rule);
  });

  it('refuses credentials in the address without echoing them', () => {
    expect(() => parseLakeAddress('s3://AKIA123:topsecret@analytics/x')).toThrow(/credentials do not belong/);
    expect(() => parseLakeAddress('s3://AKIA123:topsecret@analytics/x')).not.toThrow(/topsecret/);
  });
});

describe('resolveLake', () => {
  it('takes --lake, then PIPELINE_LAKE, then the pipeline’s lake:; empty switches it off', () => {
    const pipeline = { lake: 's3://file/p' };
    expect(resolveLake({ flag: 's3://flag/p', env: { PIPELINE_LAKE: 's3://env/p' }, pipeline })).toBe('s3://flag/p');
    expect(resolveLake({ env: { PIPELINE_LAKE: 's3://env/p' }, pipeline })).toBe('s3://env/p');
    expect(resolveLake({ env: {}, pipeline })).toBe('s3://file/p');
    expect(resolveLake({ env: {}, pipeline: {} })).toBeUndefined();
    expect(resolveLake({ flag: '', env: {}, pipeline })).toBeUndefined();
    expect(resolveLake({ env: { PIPELINE_LAKE: '' }, pipeline })).toBeUndefined();
  });
});

describe('lake: in a pipeline file', () => {
  const yaml = (lake: string) => `name: p\nlake: ${lake}\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [a]\n`;
  it('is accepted as s3://bucket/prefix and refused otherwise, at its line', () => {
    const ok = parsePipeline(yaml('s3://analytics/serp'), 'p.yaml');
    expect(ok.lake).toBe('s3://analytics/serp');
    expect(() => parsePipeline(yaml('/mnt/lake'), 'p.yaml')).toThrow(/p\.yaml:2:\d+\s+lake: s3:\/\/bucket/);
  });
});

describe('lakeError', () => {
  const at = { op: 'ListObjectsV2', url: 's3://b/p/', endpoint: 'http://127.0.0.1:9', secrets: ['AKIASECRETKEYID', 'the-secret-key'] };
  const sdk = (name: string, status: number | undefined, message: string, extra: object = {}) =>
    Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status, attempts: 2 }, ...extra });

  it('maps refused credentials, missing buckets and network failures to stable codes', () => {
    expect(lakeError(sdk('InvalidAccessKeyId', 403, 'no such key'), at).code).toBe('ETL_LAKE_REFUSED');
    expect(lakeError(sdk('AccessDenied', 403, 'denied'), at).code).toBe('ETL_LAKE_REFUSED');
    expect(lakeError(sdk('NoSuchBucket', 404, 'gone'), at).code).toBe('ETL_LAKE_CONFIG');
    expect(lakeError(sdk('CredentialsProviderError', undefined, 'Could not load credentials from any providers'), at).code).toBe(
      'ETL_LAKE_CONFIG',
    );
    const net = lakeError(sdk('Error', undefined, 'connect ECONNREFUSED 127.0.0.1:9', { code: 'ECONNREFUSED' }), at);
    expect(net).toMatchObject({ code: 'ETL_LAKE_UNREACHABLE', retryable: true });
    expect(net.message).toContain('after 2 attempts');
    expect(lakeError(sdk('InternalError', 500, 'oops', { $fault: 'server' }), at).code).toBe('ETL_LAKE_UNREACHABLE');
  });

  it('removes the key id and secret from whatever the SDK said', () => {
    const e = lakeError(sdk('SignatureDoesNotMatch', 403, 'key AKIASECRETKEYID signed with the-secret-key'), at);
    expect(e.message).not.toMatch(/AKIASECRETKEYID|the-secret-key/);
    expect(String((e.cause as Error).message)).not.toMatch(/AKIASECRETKEYID|the-secret-key/);
  });
});
