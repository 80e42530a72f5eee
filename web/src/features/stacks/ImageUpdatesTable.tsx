import type { ImageRelease, ImageUpdate } from "../../api/types";
import { formatDateTime, shortDigest } from "../../components/format";
import { Cell, Row, Table } from "../../components/Table";
import { JumpBadge } from "./UpdatePill";

const IMAGE_STATE: Record<ImageUpdate["state"], { label: string; className: string }> = {
  update_available: { label: "Update available", className: "pill pill-update" },
  up_to_date: { label: "Up to date", className: "status tone-good" },
  pinned: { label: "Pinned by digest", className: "muted" },
  local: { label: "Local image", className: "muted" },
  unknown: { label: "Not checked", className: "muted" },
  error: { label: "Check failed", className: "status tone-bad" },
};

/** Where to read what changed: the forge's releases page, else the source repository. */
function ReleaseLink({ release, service }: { release: ImageRelease; service: string }) {
  const href = release.link ?? release.source;
  const text = release.version ? `Release ${release.version}` : "Release notes";
  if (!href) return release.version ? <span className="muted">{text}</span> : null;
  return (
    <a href={href} target="_blank" rel="noopener noreferrer" aria-label={`${text} of ${service} (opens in a new tab)`}>
      {text}
    </a>
  );
}

/** What the newer image is: its tag (or a newer digest), the step, its release, whether it was rolled back. */
function NewVersion({ image }: { image: ImageUpdate }) {
  // (An agent of an earlier version sends none of the newer fields.)
  const offered = image.state === "update_available" || Boolean(image.new_tag);
  if (!offered && !image.rolled_back) return <span className="muted">—</span>;
  return (
    <div className="new-version">
      {image.new_tag ? (
        <span>
          {image.current_version && <>{image.current_version} → </>}
          <code>{image.new_tag}</code>
        </span>
      ) : (
        offered && <span>Newer digest</span>
      )}
      {image.jump && <JumpBadge jump={image.jump} />}
      {image.release && <ReleaseLink release={image.release} service={image.service} />}
      {image.rolled_back && (
        <span
          className="warn-text small"
          title="This newer image was tried and rolled back: the auto-update will not try it again"
        >
          rolled back before
        </span>
      )}
    </div>
  );
}

const IMAGE_COLUMNS = ["Service", "Image", "State", "New version", "Local", "Registry", "Checked"] as const;
/** The columns that leave the table, in this order, when its box is too narrow for all. */
const IMAGE_FOLD = ["Checked", "Registry", "Local", "Image", "New version"] as const;

/** Each image of the stack: whether its registry has a newer one, and what that is. */
export function ImageUpdatesTable({ images }: { images: readonly ImageUpdate[] }) {
  if (images.length === 0) return <p className="muted">No images to check.</p>;
  return (
    <Table label="Image updates" columns={IMAGE_COLUMNS} fold={IMAGE_FOLD}>
      {images.map((image) => {
        const state = IMAGE_STATE[image.state];
        return (
          <Row key={`${image.service}-${image.image}`}>
            <th scope="row">{image.service}</th>
            <Cell column="Image" className="detail">
              <code>{image.image}</code>
            </Cell>
            <td>
              <span className={state.className}>{state.label}</span>
              {image.error && <div className="error small">{image.error}</div>}
            </td>
            <Cell column="New version">
              <NewVersion image={image} />
            </Cell>
            <Cell column="Local">
              <code title={image.local_digest ?? undefined}>{shortDigest(image.local_digest)}</code>
            </Cell>
            <Cell column="Registry">
              <code title={image.remote_digest ?? undefined}>{shortDigest(image.remote_digest)}</code>
            </Cell>
            <Cell column="Checked" className="nowrap">
              {formatDateTime(image.checked_at)}
            </Cell>
          </Row>
        );
      })}
    </Table>
  );
}
