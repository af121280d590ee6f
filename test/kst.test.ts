import { describe, expect, it } from 'vitest';
import { addDays, isCalendarDay, kstDay, kstDayStart, kstTimestamp, kstToday, mondayOf } from '../db/kst';

// D-5: all calendar logic is KST (UTC+9, no DST). The day turns at 15:00:00Z.
describe('KST day boundaries', () => {
  it('14:59:59Z is still the previous KST day, 15:00:00Z is the next', () => {
    expect(kstDay(new Date('2026-11-21T14:59:59Z'))).toBe('2026-11-21');
    expect(kstDay(new Date('2026-11-21T15:00:00Z'))).toBe('2026-11-22');
    expect(kstToday(new Date('2026-12-31T15:00:00Z'))).toBe('2027-01-01');
  });

  it('a KST day starts at 15:00Z the day before', () => {
    expect(kstDayStart('2026-11-22').toISOString()).toBe('2026-11-21T15:00:00.000Z');
  });

  it('timestamps are written with +09:00 and no fraction', () => {
    expect(kstTimestamp(new Date('2026-11-21T05:03:00.789Z'))).toBe('2026-11-21T14:03:00+09:00');
    expect(kstTimestamp(new Date('2026-11-21T15:00:00Z'))).toBe('2026-11-22T00:00:00+09:00');
  });

  it('adds days across months, years and leap days', () => {
    expect(addDays('2026-11-22', -30)).toBe('2026-10-23');
    expect(addDays('2028-02-28', 1)).toBe('2028-02-29');
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
  });

  it('weeks start on Monday (D-10)', () => {
    expect(mondayOf('2026-11-23')).toBe('2026-11-23'); // Monday
    expect(mondayOf('2026-11-22')).toBe('2026-11-16'); // Sunday belongs to the week before
    expect(mondayOf('2026-11-18')).toBe('2026-11-16');
    expect(mondayOf('2027-01-01')).toBe('2026-12-28'); // across a year
  });
});

describe('calendar days (D-11)', () => {
  it.each(['2026-11-22', '2028-02-29', '2026-12-31'])('accepts %s', (day) => {
    expect(isCalendarDay(day)).toBe(true);
  });
  it.each(['2026-02-30', '2027-02-29', '2026-1-1', '2026-13-01', '2026-11-22T00:00:00', '20261122', ' 2026-11-22', ''])(
    'rejects %j',
    (day) => {
      expect(isCalendarDay(day)).toBe(false);
    },
  );
});
