import { useEffect, useState } from "react";

/**
 * The time now, again every `ms`: what says "how long ago" re-reads it, so that "just now"
 * does not stay on a page whose data did not change (an agent last seen before it went
 * offline reads "3 min ago" three minutes on, without a new answer from the server).
 */
export function useNow(ms = 30_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}
