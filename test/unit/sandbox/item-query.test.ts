import { describe, expect, it } from 'vitest';
import { matchesFilter, orderItems } from '../../../src/sandbox/data/item-query.js';

const item = { url: 'https://a.example/static/app.min.js', size: 500, resource_type: 'script', checks: { is_https: true } };

describe('on-page filter operators (spec: regex, not_regex, <, <=, >, >=, =, <>, in, not_in, like, not_like)', () => {
  const rows: Array<[unknown, boolean]> = [
    [['url', 'regex', '\\.min\\.js$'], true],
    [['url', 'not_regex', '\\.min\\.js$'], false],
    [['size', '<', 500], false],
    [['size', '<=', 500], true],
    [['size', '>', 499], true],
    [['size', '>=', 501], false],
    [['resource_type', '=', 'script'], true],
    [['resource_type', '<>', 'script'], false],
    [['resource_type', 'in', ['image', 'script']], true],
    [['resource_type', 'not_in', ['image', 'script']], false],
    [['url', 'like', '%/static/%'], true],
    [['url', 'not_like', '%.css'], true],
    [['checks.is_https', '=', true], true],
    [[['size', '>', 1000], 'or', ['resource_type', '=', 'script']], true],
    [[['size', '>', 1000], 'and', ['resource_type', '=', 'script']], false],
    [[['size', '>', 1000], 'or', [['url', 'like', '%.js'], 'and', ['size', '=', 500]]], true],
  ];
  for (const [filter, expected] of rows) {
    it(`${JSON.stringify(filter)} → ${expected}`, () => expect(matchesFilter(item, filter)).toBe(expected));
  }
});

describe('order_by', () => {
  it('sorts by up to three rules, asc or desc, with missing values last', () => {
    const items = [{ a: 1, b: 'x' }, { a: 2, b: 'y' }, { a: 1, b: 'z' }, { b: 'w' }];
    expect(orderItems(items, ['a,desc', 'b,asc']).map((i) => i.b)).toEqual(['y', 'x', 'z', 'w']);
    expect(orderItems(items, ['a,asc', 'b,desc']).map((i) => i.b)).toEqual(['z', 'x', 'y', 'w']);
  });
});
