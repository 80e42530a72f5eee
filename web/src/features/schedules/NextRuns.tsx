import { useQuery } from "@tanstack/react-query";
import { useId } from "react";
import { errorMessage } from "../../api/errors";
import { Loading } from "../../components/Loading";
import { useDebounced } from "../../hooks/useDebounced";
import { timetableQueryOptions } from "./queries";
import { formatInZone } from "./timetable";

/** "03:00" of a time in `timezone` (the end of a window: its day is the start's, most often). */
function clockInZone(value: string, timezone: string): string {
  const full = formatInZone(value, timezone);
  return full.slice(full.lastIndexOf(" ") + 1);
}

/**
 * What a timetable means, as the server computes it: its next times, each read in its zone.
 * A backup schedule's form shows its next runs; an update policy's form its next
 * maintenance windows (`minutes`: how long each lasts, shown as start – end).
 */
export function NextRuns({
  cron,
  timezone,
  title = "Next runs",
  minutes,
  blank = "Give a timetable and a time zone.",
}: {
  cron: string;
  timezone: string;
  title?: string;
  minutes?: number;
  /** What is said while there is no timetable. */
  blank?: string;
}) {
  const settled = { cron: useDebounced(cron.trim(), 300), timezone: useDebounced(timezone.trim(), 300) };
  const preview = useQuery(timetableQueryOptions(settled.cron, settled.timezone));
  const headingId = useId();
  let body;
  if (!settled.cron || !settled.timezone) {
    body = <p className="muted small">{blank}</p>;
  } else if (preview.isError) {
    body = <p className="error small">{errorMessage(preview.error)}</p>;
  } else if (!preview.data) {
    body = <Loading label="Reading the timetable…" />;
  } else {
    body = (
      <>
        <ol aria-labelledby={headingId} className="next-runs">
          {preview.data.next.map((time) => (
            <li key={time}>
              <time dateTime={time}>{formatInZone(time, settled.timezone)}</time>
              {minutes !== undefined && minutes > 0 && (
                <>
                  {" – "}
                  {clockInZone(new Date(new Date(time).getTime() + minutes * 60_000).toISOString(), settled.timezone)}
                </>
              )}
            </li>
          ))}
        </ol>
        <p className="muted small">
          Cron expression: <code>{preview.data.cron}</code>, in {settled.timezone}
        </p>
      </>
    );
  }
  return (
    <div className="next-runs-preview" aria-live="polite">
      <h3 id={headingId}>{title}</h3>
      {body}
    </div>
  );
}
