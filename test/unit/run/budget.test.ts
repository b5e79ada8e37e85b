import { describe, expect, it } from 'vitest';
import { budgetStop, priceUnknown, tasksWithinBudget } from '../../../src/run/budget.js';

describe('budgetStop: a pure function of the budget, the spend so far and the next purchase', () => {
  it('no budget never stops', () => {
    expect(budgetStop({ budgetCny: undefined, spentCny: 1e9, chargedTasks: 1, next: [{ tasks: 100 }] })).toBeNull();
  });

  it('prices the next batch at what this run paid for its endpoint, before what earlier runs paid', () => {
    // 0.006 a task in this run; 50 more cost 0.3, so 0.9 <= 1 goes on and 0.9 > 0.8 stops, whatever earlier runs paid.
    expect(
      budgetStop({ budgetCny: 1, spentCny: 0.6, chargedTasks: 100, next: [{ tasks: 50, runPerTask: 0.006, knownPerTask: 1 }] }),
    ).toBeNull();
    const stop = budgetStop({
      budgetCny: 0.8,
      spentCny: 0.6,
      chargedTasks: 100,
      next: [{ tasks: 50, runPerTask: 0.006, knownPerTask: 0 }],
    });
    expect(stop).toMatch(/^budget of 0.8 CNY reached: 0.6000 CNY spent, the next batch would cost about 0.3000 CNY/);
  });

  it("an endpoint this run has not paid for yet is priced at what earlier runs paid for it, else at the run's average", () => {
    // This run paid 0.6 for 100 tasks of another endpoint: 0.02 a task from the history wins over its 0.006.
    expect(budgetStop({ budgetCny: 1, spentCny: 0.6, chargedTasks: 100, next: [{ tasks: 50, knownPerTask: 0.02 }] })).toMatch(
      /about 1.0000 CNY/,
    );
    expect(budgetStop({ budgetCny: 0.8, spentCny: 0.6, chargedTasks: 100, next: [{ tasks: 50 }] })).toMatch(/about 0.3000 CNY/);
  });

  it('a purchase has no price when neither this run nor an earlier one paid for its endpoint', () => {
    expect(priceUnknown({ tasks: 100 })).toBe(true);
    expect(priceUnknown({ tasks: 100, knownPerTask: 0.01 })).toBe(false);
    expect(priceUnknown({ tasks: 100, runPerTask: 0.01 })).toBe(false);
  });

  it('before the first charge, prices at what earlier runs paid; never bought before is 0', () => {
    expect(budgetStop({ budgetCny: 1, spentCny: 0, chargedTasks: 0, next: [{ tasks: 100, knownPerTask: 0.02 }] })).toMatch(
      /about 2.0000 CNY/,
    );
    expect(budgetStop({ budgetCny: 1, spentCny: 0, chargedTasks: 0, next: [{ tasks: 100 }] })).toBeNull();
  });

  it('a group of live calls is priced together and named as calls', () => {
    const stop = budgetStop({ budgetCny: 0.05, spentCny: 0.04, chargedTasks: 4, next: [{ tasks: 1 }, { tasks: 1 }, { tasks: 1 }] });
    expect(stop).toMatch(/the next 3 calls would cost about 0.0300 CNY/);
  });

  it('spending exactly the budget is allowed', () => {
    expect(budgetStop({ budgetCny: 1, spentCny: 0.5, chargedTasks: 10, next: [{ tasks: 10 }] })).toBeNull();
  });
});

describe('tasksWithinBudget: how much of the next purchases the budget still holds', () => {
  it('counts whole tasks at the price budgetStop uses, in order, stopping at the first purchase that does not fit whole', () => {
    // 0.7 left at 0.006 a task: 116 tasks (0.696), not 117.
    expect(tasksWithinBudget({ budgetCny: 1, spentCny: 0.3, chargedTasks: 50, next: [{ tasks: 200, runPerTask: 0.006 }] })).toBe(116);
    // Two calls of 4 tasks at 0.1 a task, 0.5 left: the first whole, one task of the second.
    expect(
      tasksWithinBudget({
        budgetCny: 1,
        spentCny: 0.5,
        chargedTasks: 5,
        next: [
          { tasks: 4, knownPerTask: 0.1 },
          { tasks: 4, knownPerTask: 0.1 },
        ],
      }),
    ).toBe(5);
    // Exactly the budget: the last task fits (no rounding error leaves it out).
    expect(tasksWithinBudget({ budgetCny: 0.5, spentCny: 0.43, chargedTasks: 100, next: [{ tasks: 100, runPerTask: 0.0043 }] })).toBe(16);
    expect(tasksWithinBudget({ budgetCny: 0.0989, spentCny: 0, chargedTasks: 0, next: [{ tasks: 100, knownPerTask: 0.0043 }] })).toBe(23);
  });

  it('nothing when less than a task is left; every task of a purchase with no price to go by', () => {
    expect(tasksWithinBudget({ budgetCny: 0.004, spentCny: 0, chargedTasks: 0, next: [{ tasks: 100, knownPerTask: 0.0043 }] })).toBe(0);
    expect(tasksWithinBudget({ budgetCny: 1, spentCny: 2, chargedTasks: 10, next: [{ tasks: 3, runPerTask: 0.1 }] })).toBe(0);
    expect(tasksWithinBudget({ budgetCny: 1, spentCny: 0, chargedTasks: 0, next: [{ tasks: 7 }] })).toBe(7);
  });
});
