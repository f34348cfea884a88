// The fixtures' activity: leave requests across the year, exceptions, and ten working days of attendance.
import { clockIn, runAbsenceReport } from './attendance.js';
import { addDays, isWeekend } from './calendar.js';
import { isWorkingDay, mockId, onLeave } from './rules.js';
import type { EmployeeRow, MockState } from './state.js';

const STATUS_CYCLE = [2, 0, 1, 3, 2, 4, 5, 2, 0, 2];
const EXCEPTION_CYCLE = ['Approved', 'Pending', 'Approved', 'Rejected', 'Cancelled', 'Approved'] as const;
const TYPE_CYCLE = ['ExcusedAbsence', 'DayOffGranted', 'RemoteDay'] as const;

/**
 * The day `date`, or the day before `today` when `date` is not before it: fixtures never happen in the future.
 * @example
 * pastDay('2026-07-01', '2026-06-15') // '2026-06-14'
 */
function pastDay(date: string, today: string): string {
  return date < today ? date : addDays(today, -1);
}

/**
 * Thirty requests of the main organisation spread over this year, one of the other's, and annual balances.
 * @example
 * addLeaveRequests(state, ours, '2026-06-15');
 */
export function addLeaveRequests(state: MockState, ours: readonly EmployeeRow[], today: string): void {
  const year = Number(today.slice(0, 4));
  const london = state.companies[1]!.id;
  for (let i = 0; i < 30; i++) {
    const who = ours[i % ours.length]!;
    const typeIndex = who.companyId === london ? [0, 1, 3][i % 3]! : [0, 1, 2][i % 3]!;
    let start = addDays(`${year}-01-05`, i * 11);
    while (isWeekend(start)) start = addDays(start, 1);
    state.leaveRequests.push({
      id: mockId(0x1eae, i + 1),
      employeeId: who.id,
      leaveTypeId: state.leaveTypes[typeIndex]!.id,
      startDate: start,
      endDate: addDays(start, i % 4),
      statusId: STATUS_CYCLE[i % STATUS_CYCLE.length]!,
      comments: i % 3 === 1 ? 'Doctor says rest' : `Request ${i + 1}`,
      // Two weeks ahead, or before today for leave further out: never requested in the mock's future.
      requestedOn: `${pastDay(addDays(start, -14), today)}T09:${String(i).padStart(2, '0')}:00.000Z`,
      documents:
        typeIndex === 1
          ? [
              {
                id: mockId(0xd0c, 10 + i),
                name: 'note.pdf',
                mime: 'application/pdf',
                document: `https://files.example.com/leave/${i}.pdf`,
                storage: 0,
              },
              {
                id: mockId(0xd0c, 50 + i),
                name: 'scan.png',
                mime: 'image/png',
                document: 'private',
                storage: 1,
              },
            ]
          : [],
      relieverIds: [ours[(i + 1) % ours.length]!.id],
      handoffNote: `Handover notes for request ${i + 1}`,
    });
  }
  state.leaveRequests.push({
    id: mockId(0x1eae, 99),
    employeeId: state.employees[8]!.id,
    leaveTypeId: state.leaveTypes[5]!.id,
    startDate: `${year}-02-02`,
    endDate: `${year}-02-03`,
    statusId: 0,
    comments: 'Other org',
    requestedOn: `${pastDay(`${year}-01-20`, today)}T10:00:00.000Z`,
    documents: [],
    relieverIds: [],
    handoffNote: '',
  });
  // Balances are set up for annual leave only: the other pairs show the full allowance (spec rule 1).
  for (const e of ours)
    state.balances.push({ employeeId: e.id, leaveTypeId: state.leaveTypes[0]!.id, totalDays: 20 });
}

/**
 * Clock-ins and a finished absence report for each of the ten weekdays before today, and today's first clock-ins.
 * @example
 * addAttendance(state, ours, '2026-06-15');
 */
export function addAttendance(state: MockState, ours: readonly EmployeeRow[], today: string): void {
  const org = ours[0]!.organizationId;
  for (let d = 10; d >= 1; d--) {
    const day = workingDayBefore(today, d);
    ours.forEach((e, i) => {
      // Nobody clocks in on a day off, a holiday or approved leave.
      if (!isWorkingDay(state, e, day) || onLeave(state, e.id, day)) return;
      if ((i * 7 + d) % 9 === 0) return; // no clock-in: the report decides (Absent or Excused)
      clockIn(state, e, day, (i * 3 + d) % 8 === 0 ? '09:20:00' : '08:45:00', '17:30:00');
    });
    runAbsenceReport(state, org, day, `${day}T19:00:00.000Z`);
  }
  ours.slice(0, 4).forEach((e, i) => {
    if (isWorkingDay(state, e, today) && !onLeave(state, e.id, today))
      clockIn(state, e, today, i === 3 ? '09:05:00' : '08:50:00');
  });
}

/**
 * The working day `count` working days before `today`.
 * @example
 * workingDayBefore('2026-06-15', 1) // '2026-06-12', the Friday before
 */
export function workingDayBefore(today: string, count: number): string {
  let day = today;
  for (let left = count; left > 0; ) {
    day = addDays(day, -1);
    if (!isWeekend(day)) left--;
  }
  return day;
}

/**
 * Twenty exceptions around the attendance history, a bulk closure for London, and one of the other organisation.
 * @example
 * addExceptions(state, ours, '2026-06-15');
 */
export function addExceptions(state: MockState, ours: readonly EmployeeRow[], today: string): void {
  const hr = 'Helen Ruiz';
  for (let i = 0; i < 20; i++) {
    const start = addDays(workingDayBefore(today, 9), i * 2 - 8);
    const status = EXCEPTION_CYCLE[i % EXCEPTION_CYCLE.length]!;
    // Raised three days ahead and decided two days ahead, or before today when that would be in the future.
    const [raised, decided] = [pastDay(addDays(start, -3), today), pastDay(addDays(start, -2), today)];
    state.exceptions.push({
      id: mockId(0xe8c, i + 1),
      employeeId: ours[(i * 3) % ours.length]!.id,
      startDate: start,
      // A half day covers one day; some whole-day ones cover two.
      endDate: addDays(start, i % 3 === 0 && i % 7 !== 3 ? 1 : 0),
      ...(i % 7 === 3 ? { halfDay: 'FirstHalf' as const } : {}),
      type: TYPE_CYCLE[i % TYPE_CYCLE.length]!,
      isPaid: i % 4 !== 1,
      status,
      requiresApproval: i % 5 === 2,
      createdByName: hr,
      created: `${raised}T10:00:00.000Z`,
      ...(status === 'Approved' ? { approvedByName: hr, approvedAt: `${decided}T11:00:00.000Z` } : {}),
      ...(status === 'Rejected' ? { rejectedAt: `${decided}T11:00:00.000Z` } : {}),
      ...(status === 'Cancelled' ? { cancelledAt: `${decided}T11:00:00.000Z` } : {}),
    });
  }
  // An approved half day inside the attendance history, so records show `excusedHalfDay`.
  const halfDay = workingDayBefore(today, 2);
  state.exceptions.push({
    id: mockId(0xe8c, 50),
    employeeId: ours[2]!.id,
    startDate: halfDay,
    endDate: halfDay,
    halfDay: 'SecondHalf',
    type: 'ExcusedAbsence',
    isPaid: true,
    status: 'Approved',
    requiresApproval: false,
    createdByName: hr,
    created: `${addDays(halfDay, -1)}T10:00:00.000Z`,
    approvedByName: hr,
    approvedAt: `${addDays(halfDay, -1)}T11:00:00.000Z`,
  });
  // A bulk closure: one batch, one approval, everyone in London.
  const batchId = mockId(0xba7c, 1);
  const closure = addDays(today, 10);
  state.exceptions.push(
    ...ours
      .filter((e) => e.companyId === state.companies[1]!.id)
      .map((e, i) => ({
        id: mockId(0xe8c, 100 + i),
        employeeId: e.id,
        startDate: closure,
        endDate: closure,
        type: 'CompanyClosure' as const,
        isPaid: true,
        status: 'Pending' as const,
        requiresApproval: false,
        batchId,
        createdByName: hr,
        created: `${addDays(today, -1)}T08:00:00.000Z`,
      })),
  );
  const otherEmployee = state.employees.find((e) => e.organizationId !== ours[0]!.organizationId)!;
  state.exceptions.push({
    id: mockId(0xe8c, 900),
    employeeId: otherEmployee.id,
    startDate: today,
    endDate: today,
    type: 'RemoteDay',
    isPaid: true,
    status: 'Approved',
    requiresApproval: false,
    createdByName: 'Other HR',
    created: `${addDays(today, -1)}T07:00:00.000Z`,
    approvedByName: 'Other HR',
    approvedAt: `${addDays(today, -1)}T08:00:00.000Z`,
  });
}
