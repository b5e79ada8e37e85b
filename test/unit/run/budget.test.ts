import { describe, expect, it } from 'vitest';
import { taskUnits } from '../../../src/catalog/index.js';
import { budgetStop, priceUnknown, tasksWithinBudget } from '../../../src/post/budget.js';

/** `n` tasks of one unit each (a depth-10 SERP, or any task of another endpoint). */
const ones = (n: number) => Array.from({ length: n }, () => 1);
/** What the run spent: net `spent`, and gross charges per unit `chargedCny / chargedUnits`. */
const spent = (spentCny: number, chargedCny = spentCny, chargedUnits = 0) => ({ spentCny, chargedCny, chargedUnits });

describe('budgetStop: a pure function of the budget, the spend so far and the next purchase', () => {
  it('no budget never stops', () => {
    expect(budgetStop({ budgetCny: undefined, ...spent(1e9, 1e9, 1), next: [{ units: ones(100) }] })).toBeNull();
  });

  it('prices the next batch at what this run paid for its endpoint, before what earlier runs paid', () => {
    // 0.006 a unit in this run; 50 more cost 0.3, so 0.9 <= 1 goes on and 0.9 > 0.8 stops, whatever earlier runs paid.
    expect(
      budgetStop({ budgetCny: 1, ...spent(0.6, 0.6, 100), next: [{ units: ones(50), runPerUnit: 0.006, knownPerUnit: 1 }] }),
    ).toBeNull();
    const stop = budgetStop({ budgetCny: 0.8, ...spent(0.6, 0.6, 100), next: [{ units: ones(50), runPerUnit: 0.006, knownPerUnit: 0 }] });
    expect(stop).toMatch(/^budget of 0.8 CNY reached: 0.6000 CNY spent, the next batch would cost about 0.3000 CNY/);
  });

  it("an endpoint this run has not paid for yet is priced at what earlier runs paid for it, else at the run's charges per unit", () => {
    // This run paid 0.6 for 100 units of another endpoint: 0.02 a unit from the history wins over its 0.006.
    expect(budgetStop({ budgetCny: 1, ...spent(0.6, 0.6, 100), next: [{ units: ones(50), knownPerUnit: 0.02 }] })).toMatch(
      /about 1.0000 CNY/,
    );
    expect(budgetStop({ budgetCny: 0.8, ...spent(0.6, 0.6, 100), next: [{ units: ones(50) }] })).toMatch(/about 0.3000 CNY/);
  });

  it('weighs a deep SERP task by its depth: a unit price learnt at depth 10 prices depth 200 at 15.25 units', () => {
    expect(taskUnits('serp', { depth: 10 })).toBe(1);
    expect(taskUnits('serp', {})).toBe(1);
    expect(taskUnits('serp', { depth: 200 })).toBe(15.25);
    expect(taskUnits('serp', { depth: 101 })).toBe(1 + 0.75 * 10);
    expect(taskUnits('keywords_data', { depth: 200 })).toBe(1);
    // One depth-10 task bought at 0.0043 (the probe); six depth-200 tasks with 0.1 of budget: about 0.39 more, so one is bought.
    const deep = ones(6).map(() => taskUnits('serp', { depth: 200 }));
    const a = { budgetCny: 0.1, ...spent(0.0043, 0.0043, 1), next: [{ units: deep, runPerUnit: 0.0043 }] };
    expect(budgetStop(a)).toMatch(/the next batch would cost about 0.393\d CNY/);
    expect(tasksWithinBudget(a)).toBe(1);
  });

  it("learns a further depth block's price apart from the base, assuming the base price for it until the charges tell", () => {
    const deep = { units: ones(6).map(() => taskUnits('serp', { depth: 200 })), blocks: ones(6).map(() => 19) };
    // Only depth-10 tasks charged (20 at 0.0043): a depth-200 task is priced at 20 × 0.0043 (a block at the base), not 15.25 ×.
    const shallowOnly = { tasks: 20, blocks: 0, cny: 0.086 };
    const a = { budgetCny: 0.35, ...spent(0.086, 0.086, 20), next: [{ ...deep, run: shallowOnly, runPerUnit: 0.0043 }] };
    expect(budgetStop(a)).toMatch(/about 0.5160 CNY/);
    expect(tasksWithinBudget(a)).toBe(3);
    expect(priceUnknown(a.next[0]!)).toBe(true);
    // Charges at two depths tell both: base 0.0043, block 0.0032 (the emulator's 0.75): four fit in 0.264.
    const both = { ...shallowOnly, base: 0.0043, block: 0.0032 };
    const b = { ...a, next: [{ ...deep, run: both }] };
    expect(tasksWithinBudget(b)).toBe(4);
    expect(priceUnknown(b.next[0]!)).toBe(false);
    // Only depth-200 tasks charged (0.0651 each): a depth-10 task is priced at the dearer of a free block (0.0651) and a block at the base (0.0651 / 20).
    const deepOnly = { tasks: 1, blocks: 19, cny: 0.0651 };
    const c = { budgetCny: 1, ...spent(0.0651, 0.0651, 15.25), next: [{ units: [1], blocks: [0], run: deepOnly }] };
    expect(budgetStop({ ...c, budgetCny: 0.13 })).toMatch(/about 0.0651 CNY/);
    expect(priceUnknown(c.next[0]!)).toBe(true);
    // Tasks at the depth charged are priced at what they were charged.
    expect(priceUnknown({ ...deep, run: deepOnly })).toBe(false);
    expect(tasksWithinBudget({ ...c, next: [{ ...deep, run: deepOnly }] })).toBe(6);
  });

  it('refunds lower what was spent, not the price of the next tasks', () => {
    // Four tasks charged 0.1324 (0.0331 each), 0.0832 refunded: 0.0492 spent, 0.1008 left of 0.15: three more tasks, not eight.
    const a = { budgetCny: 0.15, spentCny: 0.0492, chargedCny: 0.1324, chargedUnits: 4, next: [{ units: ones(8), runPerUnit: 0.0331 }] };
    expect(tasksWithinBudget(a)).toBe(3);
    expect(budgetStop(a)).toMatch(/0.0492 CNY spent, the next batch would cost about 0.2648 CNY/);
    // An endpoint not bought yet, by this run's gross charges per unit.
    expect(tasksWithinBudget({ ...a, next: [{ units: ones(8) }] })).toBe(3);
  });

  it('a purchase has no price when neither this run nor an earlier one paid for its endpoint', () => {
    expect(priceUnknown({ units: ones(100) })).toBe(true);
    expect(priceUnknown({ units: ones(100), knownPerUnit: 0.01 })).toBe(false);
    expect(priceUnknown({ units: ones(100), runPerUnit: 0.01 })).toBe(false);
  });

  it('before the first charge, prices at what earlier runs paid; never bought before is 0', () => {
    expect(budgetStop({ budgetCny: 1, ...spent(0), next: [{ units: ones(100), knownPerUnit: 0.02 }] })).toMatch(/about 2.0000 CNY/);
    expect(budgetStop({ budgetCny: 1, ...spent(0), next: [{ units: ones(100) }] })).toBeNull();
  });

  it('a group of live calls is priced together and named as calls', () => {
    const stop = budgetStop({
      budgetCny: 0.05,
      ...spent(0.04, 0.04, 4),
      next: [{ units: ones(1) }, { units: ones(1) }, { units: ones(1) }],
    });
    expect(stop).toMatch(/the next 3 calls would cost about 0.0300 CNY/);
  });

  it('spending exactly the budget is allowed', () => {
    expect(budgetStop({ budgetCny: 1, ...spent(0.5, 0.5, 10), next: [{ units: ones(10) }] })).toBeNull();
  });
});

describe('tasksWithinBudget: how much of the next purchases the budget still holds', () => {
  it('counts whole tasks at the price budgetStop uses, in order, stopping at the first task that does not fit', () => {
    // 0.7 left at 0.006 a task: 116 tasks (0.696), not 117.
    expect(tasksWithinBudget({ budgetCny: 1, ...spent(0.3, 0.3, 50), next: [{ units: ones(200), runPerUnit: 0.006 }] })).toBe(116);
    // Two calls of 4 tasks at 0.1 a task, 0.5 left: the first whole, one task of the second.
    expect(
      tasksWithinBudget({
        budgetCny: 1,
        ...spent(0.5, 0.5, 5),
        next: [
          { units: ones(4), knownPerUnit: 0.1 },
          { units: ones(4), knownPerUnit: 0.1 },
        ],
      }),
    ).toBe(5);
    // Exactly the budget: the last task fits (no rounding error leaves it out).
    expect(tasksWithinBudget({ budgetCny: 0.5, ...spent(0.43, 0.43, 100), next: [{ units: ones(100), runPerUnit: 0.0043 }] })).toBe(16);
    expect(tasksWithinBudget({ budgetCny: 0.0989, ...spent(0), next: [{ units: ones(100), knownPerUnit: 0.0043 }] })).toBe(23);
    // Tasks of different depths, in order: 0.05 left at 0.0043 a unit buys a depth-10 and a depth-100 task (8.5 units), not the depth-200 after.
    expect(tasksWithinBudget({ budgetCny: 0.05, ...spent(0), next: [{ units: [1, 8.5, 15.25, 1], knownPerUnit: 0.0043 }] })).toBe(2);
  });

  it('nothing when less than a task is left; every task of a purchase with no price to go by', () => {
    expect(tasksWithinBudget({ budgetCny: 0.004, ...spent(0), next: [{ units: ones(100), knownPerUnit: 0.0043 }] })).toBe(0);
    expect(tasksWithinBudget({ budgetCny: 1, ...spent(2, 2, 10), next: [{ units: ones(3), runPerUnit: 0.1 }] })).toBe(0);
    expect(tasksWithinBudget({ budgetCny: 1, ...spent(0), next: [{ units: ones(7) }] })).toBe(7);
  });
});
