import { Fragment } from "react";

/** A certificate's SHA-256 fingerprint (`AB:CD:…`), which wraps between its byte pairs only. */
export function Fingerprint({ value }: { value: string }) {
  const pairs = value.split(":");
  return (
    <code className="fingerprint-value">
      {pairs.map((pair, i) => (
        <Fragment key={i}>
          {pair}
          {i < pairs.length - 1 && (
            <>
              :<wbr />
            </>
          )}
        </Fragment>
      ))}
    </code>
  );
}
