// The mock's fixture data: two organisations, deterministic for a given "today", built through the rules.
import { isLeapYear } from './calendar.js';
import { addAttendance, addExceptions, addLeaveRequests, workingDayBefore } from './fixture-activity.js';
import { mockId } from './rules.js';
import type { EmployeeRow, LeaveTypeRow, MockState } from './state.js';

/**
 * The API keys of the fixtures: organisation, permissions.
 * @example
 * createApiClient({ apiKey: FIXTURE_KEYS.full, baseUrl: mock.baseUrl })
 */
export const FIXTURE_KEYS = {
  full: 'wf_test_full_access',
  leave: 'wf_test_leave_only',
  attendance: 'wf_test_attendance_only',
  people: 'wf_test_people_only',
  otherOrganization: 'wf_test_other_organization',
} as const;

/**
 * The second organisation, whose data the first one's keys must never reach.
 * @example
 * state.employees.filter((e) => e.organizationId === OTHER_ORGANIZATION_ID)
 */
export const OTHER_ORGANIZATION_ID: string = mockId(0, 2);

const NAMES = [
  ['Ada', 'Okafor', 'Engineer'],
  ['Tunde', 'Bello', 'Engineer'],
  ['Chioma', 'Eze', 'Designer'],
  ['Kwame', 'Mensah', 'Sales Lead'],
  ['Amara', 'Nwosu', 'Account Manager'],
  ['Oliver', 'Smith', 'Operations Manager'],
  ['Grace', 'Hughes', 'Analyst'],
  ['Sam', 'Patel', 'Support Engineer'],
] as const;

function leaveType(n: number, org: string, fields: Partial<LeaveTypeRow>, year: number): LeaveTypeRow {
  return {
    id: mockId(0x1ea7, n),
    organizationId: org,
    name: '',
    description: '',
    maxLeaveDays: 10,
    carryForward: { maxCarryForwardLimit: 0, expirationDate: 2 },
    eligibilityCriteria: 0,
    requiresDocument: false,
    requiredDocument: [],
    isActive: true,
    created: `${year - 2}-01-10T08:00:00.000Z`,
    lastModified: `${year - 1}-12-01T08:00:00.000Z`,
    ...fields,
  };
}

/**
 * Builds the fixtures for a given today (`YYYY-MM-DD`): leave across this year, attendance and reports for
 * the last ten weekdays, today's clock-ins still waiting for the absence report. Nothing in them happened
 * after today: requests, exceptions and decisions are dated before it.
 * @example
 * const state = createFixtures('2026-06-15');
 */
export function createFixtures(today: string): MockState {
  const year = Number(today.slice(0, 4));
  // mockId(0, 1) is the test kit's TEST_ORGANIZATION_ID: deliveries from createSignedDelivery match the mock.
  const [org, other] = [mockId(0, 1), OTHER_ORGANIZATION_ID];
  const [co1, co2, co3] = [mockId(0xc0, 1), mockId(0xc0, 2), mockId(0xc0, 3)];
  const [eng, sales, ops, otherDept] = [1, 2, 3, 4].map((n) => mockId(0xde, n)) as [
    string,
    string,
    string,
    string,
  ];
  const [platform, mobile] = [mockId(0x0e17, 1), mockId(0x0e17, 2)];
  const state: MockState = {
    countries: { 1: 'Nigeria', 2: 'Ghana', 3: 'United Kingdom', 4: 'Kenya' },
    apiKeys: [
      { key: FIXTURE_KEYS.full, organizationId: org, permissions: ['Leave: View', 'Attendance: View'] },
      { key: FIXTURE_KEYS.leave, organizationId: org, permissions: ['Leave: View'] },
      { key: FIXTURE_KEYS.attendance, organizationId: org, permissions: ['Attendance: View'] },
      { key: FIXTURE_KEYS.people, organizationId: org, permissions: ['Employee Management: View'] },
      {
        key: FIXTURE_KEYS.otherOrganization,
        organizationId: other,
        permissions: ['Leave: View', 'Attendance: View'],
      },
    ],
    organizations: [
      { id: org, name: 'Acme Workforce Ltd', countryId: 1 },
      { id: other, name: 'Other Org Ltd', countryId: 4 },
    ],
    companies: [
      { id: co1, organizationId: org, name: 'Acme Lagos', countryId: 1, officeCountryIds: [2] },
      { id: co2, organizationId: org, name: 'Acme London', countryId: 3, officeCountryIds: [] },
      { id: co3, organizationId: other, name: 'Other Nairobi', countryId: 4, officeCountryIds: [] },
    ],
    departments: [
      {
        id: eng,
        companyId: co1,
        name: 'Engineering',
        units: [
          { id: platform, name: 'Platform' },
          { id: mobile, name: 'Mobile' },
        ],
      },
      { id: sales, companyId: co1, name: 'Sales', units: [] },
      { id: ops, companyId: co2, name: 'Operations', units: [] },
      { id: otherDept, companyId: co3, name: 'Finance', units: [] },
    ],
    employees: [],
    leaveTypes: [
      leaveType(
        1,
        org,
        {
          name: 'Annual Leave',
          description: 'Paid time off',
          maxLeaveDays: 20,
          carryForward: { maxCarryForwardLimit: 5, expirationDate: 2 },
        },
        year,
      ),
      leaveType(
        2,
        org,
        {
          name: 'Sick Leave',
          description: 'Illness, with a note',
          maxLeaveDays: 10,
          requiresDocument: true,
          requiredDocument: [
            {
              id: mockId(0xd0c, 1),
              name: 'Medical note',
              document: 'https://files.example.com/templates/medical-note.pdf',
            },
          ],
        },
        year,
      ),
      leaveType(
        3,
        org,
        {
          name: 'Study Leave',
          description: 'Exams and courses',
          maxLeaveDays: 5,
          eligibilityCriteria: 1,
          companyId: co1,
        },
        year,
      ),
      leaveType(
        4,
        org,
        {
          name: 'Compassionate Leave',
          description: 'Bereavement',
          maxLeaveDays: 3,
          eligibilityCriteria: 2,
          companyId: co2,
        },
        year,
      ),
      leaveType(
        5,
        org,
        {
          name: 'Sabbatical',
          description: 'Retired scheme',
          maxLeaveDays: 30,
          eligibilityCriteria: 4,
          isActive: false,
        },
        year,
      ),
      leaveType(6, other, { name: 'Annual Leave', description: 'Paid time off', maxLeaveDays: 21 }, year),
    ],
    leaveRequests: [],
    balances: [],
    attendance: [],
    exceptions: [],
    holidays: [
      {
        id: mockId(0x401, 1),
        organizationId: org,
        name: "Founders' Day",
        date: `${year - 3}-06-12`,
        isRecurring: true,
      },
      {
        id: mockId(0x401, 2),
        organizationId: org,
        name: 'Year-end closure',
        date: `${year}-12-24`,
        isRecurring: false,
        companyId: co1,
      },
      {
        id: mockId(0x401, 3),
        organizationId: org,
        name: 'London office day',
        date: `${year - 1}-09-04`,
        isRecurring: true,
        companyId: co2,
      },
      {
        id: mockId(0x401, 4),
        organizationId: org,
        name: 'Census day',
        date: `${year - 1}-11-11`,
        isRecurring: false,
      },
      {
        id: mockId(0x401, 5),
        organizationId: org,
        name: 'Office move',
        date: workingDayBefore(today, 4),
        isRecurring: false,
        companyId: co1,
      },
      {
        id: mockId(0x401, 7),
        organizationId: org,
        name: 'Staff day',
        date: workingDayBefore(today, 7),
        isRecurring: false,
      },
      {
        id: mockId(0x401, 8),
        organizationId: org,
        name: 'Leap Day',
        date: `${lastLeapYearBefore(year)}-02-29`,
        isRecurring: true,
        companyId: co2,
      },
      {
        id: mockId(0x401, 6),
        organizationId: other,
        name: 'Other Org day',
        date: `${year}-05-05`,
        isRecurring: false,
      },
    ],
    publicHolidays: [
      { name: "New Year's Day", monthDay: '01-01', days: 1, countryId: 1 },
      { name: 'Independence Day', monthDay: '10-01', days: 1, countryId: 1 },
      { name: 'Christmas', monthDay: '12-25', days: 2, countryId: 1 },
      { name: 'Independence Day', monthDay: '03-06', days: 1, countryId: 2 },
      { name: "New Year's Day", monthDay: '01-01', days: 1, countryId: 3 },
      { name: 'Christmas', monthDay: '12-25', days: 2, countryId: 3 },
      { name: 'Madaraka Day', monthDay: '06-01', days: 1, countryId: 4 },
    ],
    reports: [],
  };
  NAMES.forEach(([firstName, lastName, jobRole], i) => {
    const department = [eng, eng, eng, sales, sales, ops, ops, eng][i]!;
    state.employees.push(
      employee(i + 1, org, department === ops ? co2 : co1, department, firstName, lastName, jobRole, i),
    );
  });
  state.employees.push(employee(9, other, co3, otherDept, 'Wanjiru', 'Kamau', 'Accountant', 0));
  state.employees[0] = { ...state.employees[0]!, unitId: platform };
  state.employees[1] = { ...state.employees[1]!, unitId: mobile };
  // Two part-timers, so leave days and the absence report meet days off as well as weekends.
  state.employees[6] = { ...state.employees[6]!, daysOff: ['Friday'] };
  state.employees[7] = { ...state.employees[7]!, daysOff: ['Wednesday'] };
  const ours = state.employees.filter((e) => e.organizationId === org);
  addLeaveRequests(state, ours, today);
  addExceptions(state, ours, today);
  addAttendance(state, ours, today);
  return state;
}

function lastLeapYearBefore(year: number): number {
  let y = year - 1;
  while (!isLeapYear(y)) y--;
  return y;
}

function employee(
  n: number,
  org: string,
  companyId: string,
  departmentId: string,
  firstName: string,
  lastName: string,
  jobRole: string,
  i: number,
): EmployeeRow {
  return {
    id: mockId(0xe0, n),
    organizationId: org,
    companyId,
    departmentId,
    firstName,
    lastName,
    jobRole,
    email: `${firstName}.${lastName}@example.com`.toLowerCase(),
    workMode: (['Onsite', 'Hybrid', 'Remote'] as const)[i % 3]!,
    trackingMethod: i === 4 ? 'AttendanceOnly' : 'ClockInClockOut',
  };
}
