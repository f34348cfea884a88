// A handler's event type mistyped in code run without a type check (tsx, plain JavaScript): the run-time check that
// names the type meant, so its deliveries are not answered 200 ignored unseen.
import { describe, expect, it } from 'vitest';
import { typoWarning, unknownType } from '../../src/unknown-type.js';

describe('an on() pattern one or two keystrokes from a type the service sends', () => {
  for (const [pattern, meant] of [
    ['leave.aproved', 'leave.approved'],
    ['leave.approve', 'leave.approved'],
    ['leave.canceled', 'leave.cancelled'],
    ['leave_approved', 'leave.approved'],
    ['Leave.Approved', 'leave.approved'],
    ['leave.apporved', 'leave.approved'],
    ['attendance.absence-report.completed', 'attendance.absence_report.completed'],
    ['employe.terminated', 'employee.terminated'],
    ['leaves.*', 'leave.*'],
    ['attendance.exceptions.*', 'attendance.exception.*'],
  ] as const) {
    it(`names '${meant}' for '${pattern}', with the fix and the way to let an unnamed type in`, () => {
      const said = typoWarning(pattern);
      expect(said).toContain(
        `on('${pattern}') names no event type the service sends: did you mean '${meant}'?`,
      );
      expect(said).toContain('answered 200 ignored');
      expect(said).toContain(`Fix: on('${meant}', ...)`);
      expect(said).toContain(`on(unknownType('${pattern}'), ...)`);
    });
  }

  it('says nothing of the spec types, their prefixes, catch-alls and names far from any', () => {
    for (const pattern of [
      'leave.approved',
      'leave.cancelled',
      'attendance.absence_report.completed',
      'webhook.test',
      'leave.*',
      'attendance.*',
      'attendance.exception.*',
      '*',
      'benefits.enrolled',
      'payslip.*',
      'leave.updated',
    ]) {
      expect(typoWarning(pattern)).toBeUndefined();
    }
  });

  it('says nothing of a near name let in on purpose with unknownType', () => {
    expect(typoWarning('leave.approve')).toBeDefined();
    expect(unknownType('leave.approve')).toBe('leave.approve');
    expect(typoWarning('leave.approve')).toBeUndefined();
  });
});
