// The handler registry: exact types, arrays, prefix wildcards and catch-alls.
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from 'workforce-webhooks';
import { createRegistry } from '../../src/registry.js';

describe('registry', () => {
  it('matches exact types, arrays, prefix wildcards and catch-alls, in registration order', () => {
    const registry = createRegistry();
    const exact = () => {};
    const several = () => {};
    const prefix = () => {};
    const nested = () => {};
    const any = () => {};
    registry.add('leave.approved', exact);
    registry.add(['leave.rejected', 'leave.approved'], several);
    registry.add('leave.*', prefix);
    registry.add('attendance.exception.*', nested);
    registry.add(null, any);
    const handlers = (type: string) => registry.match(type).map((entry) => entry.handler);
    expect(handlers('leave.approved')).toEqual([exact, several, prefix, any]);
    expect(handlers('leave.cancelled')).toEqual([prefix, any]);
    expect(handlers('attendance.exception.approved')).toEqual([nested, any]);
    expect(handlers('attendance.absence_report.completed')).toEqual([any]);
    // `leave.*` is a prefix with its dot: `leaves.x` is another family.
    expect(handlers('leaves.x')).toEqual([any]);
  });

  it('gives each registration a stable index, shared by the types of one array', () => {
    const registry = createRegistry();
    registry.add('a.b', () => {});
    registry.add(['c.d', 'e.f'], () => {});
    expect(registry.match('a.b')[0]!.index).toBe(0);
    expect(registry.match('c.d')[0]!.index).toBe(registry.match('e.f')[0]!.index);
  });

  it('sees handlers registered after a type was first matched', () => {
    const registry = createRegistry();
    expect(registry.match('leave.approved')).toHaveLength(0);
    registry.add('leave.approved', () => {});
    expect(registry.match('leave.approved')).toHaveLength(1);
  });

  it.each(['', 'leave.', '.approved', 'leave.*.x', 'leave approved', '*.approved'])(
    'refuses the pattern %j',
    (pattern) => {
      expect(() => createRegistry().add(pattern, () => {})).toThrow(ConfigurationError);
    },
  );

  it('refuses an empty list and a handler that is not a function', () => {
    expect(() => createRegistry().add([], () => {})).toThrow(ConfigurationError);
    expect(() => createRegistry().add('a.b', 'nope' as never)).toThrow(ConfigurationError);
  });
});
