import { describe, expect, it } from 'vitest';
import { EtlError } from '../../../src/errors.js';
import { orderModels, withUpstream, type Model } from '../../../src/models/index.js';

const model = (name: string, dependsOn: string[] = []): Model => ({
  name,
  layer: 'marts',
  file: `${name}.sql`,
  sql: '',
  sidecar: { grain: 'x', tests: [] },
  materialized: 'table',
  dependsOn,
});

describe('orderModels', () => {
  it('puts every model after the models it reads', () => {
    const order = orderModels([model('mart', ['int_b', 'stg_a']), model('int_b', ['stg_a']), model('stg_a'), model('other')]).map(
      (m) => m.name,
    );
    expect(order.indexOf('stg_a')).toBeLessThan(order.indexOf('int_b'));
    expect(order.indexOf('int_b')).toBeLessThan(order.indexOf('mart'));
    expect(order).toHaveLength(4);
  });

  it('refuses a cycle and names the models in it', () => {
    let err: unknown;
    try {
      orderModels([model('a', ['b']), model('b', ['a']), model('c')]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(EtlError);
    expect((err as EtlError).message).toMatch(/cycle: a, b/);
  });

  it('selects a model with everything upstream of it, and names unknown models', () => {
    const all = [model('mart', ['int_b']), model('int_b', ['stg_a']), model('stg_a'), model('other')];
    expect([...withUpstream(all, ['mart'])].sort()).toEqual(['int_b', 'mart', 'stg_a']);
    expect(() => withUpstream(all, ['nope'])).toThrow(/no model named nope/);
  });
});
