import { describe, expect, it } from "vitest";
import { shortTime } from "../features/containers/logs";
import { formatInZone } from "../features/schedules/timetable";
import { formatDateTime, formatTime } from "./format";

/** A moment at a local wall-clock time (the tests' zone, whatever it is). */
const local = (y: number, mo: number, d: number, h: number, mi: number, s: number, ms = 0) =>
  new Date(y, mo - 1, d, h, mi, s, ms).toISOString();

describe("one way to write dates and times", () => {
  it("writes a moment as year-month-day and a 24-hour time, in the browser's zone", () => {
    expect(formatDateTime(local(2026, 3, 1, 14, 3, 22))).toBe("2026-03-01 14:03:22");
    expect(formatDateTime(local(2026, 12, 31, 0, 5, 9))).toBe("2026-12-31 00:05:09");
    expect(formatDateTime(local(2026, 3, 1, 14, 3, 22), { seconds: false })).toBe("2026-03-01 14:03");
    expect(formatDateTime(local(2026, 3, 1, 14, 3, 22), { weekday: true })).toBe("Sun 2026-03-01 14:03:22");
  });

  it("writes a time of day the same way, with milliseconds for a log line", () => {
    const at = local(2026, 3, 1, 9, 4, 5, 7);
    expect(formatTime(at)).toBe("09:04:05");
    expect(formatTime(at, { seconds: false })).toBe("09:04");
    expect(formatTime(at, { millis: true })).toBe("09:04:05.007");
    expect(formatTime(new Date(at).getTime())).toBe("09:04:05"); // epoch milliseconds too
    expect(shortTime(at)).toBe("09:04:05.007");
  });

  it("writes a schedule's run in its own zone, and in the browser's when the zone is unknown", () => {
    expect(formatInZone("2026-11-24T03:00:00Z", "UTC")).toBe("Tue 2026-11-24 03:00");
    expect(formatInZone("2026-11-24T03:00:00Z", "Asia/Tokyo")).toBe("Tue 2026-11-24 12:00");
    expect(formatInZone("2026-11-24T03:00:00Z", "Not/AZone")).toBe(
      formatDateTime("2026-11-24T03:00:00Z", { seconds: false, weekday: true }),
    );
  });

  it("says nothing as a dash, and leaves what does not parse as it is", () => {
    expect(formatDateTime(null)).toBe("—");
    expect(formatTime(undefined)).toBe("—");
    expect(formatDateTime("soon")).toBe("soon");
    expect(shortTime("later")).toBe("later");
  });
});
