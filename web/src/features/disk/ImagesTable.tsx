import { useState } from "react";
import type { DiskImage } from "../../api/types";
import { ConfirmDelete } from "../../components/ConfirmDelete";
import { formatBytes, formatDateTime, shortDigest } from "../../components/format";
import { Cell, Row, RowActions, Table } from "../../components/Table";
import { useCan } from "../auth/permissions";
import { useHost } from "../hosts/host";
import { imageName, ofRepositories, stackRepositories } from "./filters";
import { useRemoveImage } from "./queries";
import { Protected, UsedBy } from "./UsedBy";

const COLUMNS = ["Image", "Size", "Created", "Used by"] as const;
const FOLD = ["Created", "Size"] as const;
/** Tags shown before the rest fold under "N more". */
const TAGS_SHOWN = 2;

function Tags({ image }: { image: DiskImage }) {
  if (image.dangling) {
    return (
      <>
        <span className="muted">&lt;none&gt;</span> <span className="badge">dangling</span>
      </>
    );
  }
  const rest = image.tags.length - TAGS_SHOWN;
  return (
    <>
      {image.tags.slice(0, TAGS_SHOWN).map((tag) => (
        <div key={tag} className="disk-name">
          {tag}
        </div>
      ))}
      {rest > 0 && (
        <details>
          <summary className="small">
            {rest} more tag{rest === 1 ? "" : "s"}
          </summary>
          {image.tags.slice(TAGS_SHOWN).map((tag) => (
            <div key={tag} className="disk-name">
              {tag}
            </div>
          ))}
        </details>
      )}
    </>
  );
}

/** Its size; what it takes alone (what removing it frees) and what it shares with other images. */
function Size({ image }: { image: DiskImage }) {
  return (
    <>
      {formatBytes(image.size)}
      <div className="muted small">
        {image.shared < 0
          ? "shared: not known"
          : image.shared === 0
            ? "nothing shared"
            : `${formatBytes(image.unique)} its own, ${formatBytes(image.shared)} shared`}
      </div>
    </>
  );
}

/**
 * The host's images: tags (or none: dangling), size, when made, what uses them. Admins
 * remove any; operators those of their stacks' repositories (the server has the last word,
 * and says why when it refuses: a container uses it, or it is not of a stack's repository).
 */
export function ImagesTable({ images, all }: { images: readonly DiskImage[]; all: readonly DiskImage[] }) {
  const host = useHost();
  const mayManage = useCan("disk.manage");
  const mayStackImages = useCan("disk.stackImages");
  const remove = useRemoveImage(host);
  const [removing, setRemoving] = useState<DiskImage | null>(null);
  const repositories = stackRepositories(all);
  const mayRemove = (image: DiskImage) => mayManage || (mayStackImages && ofRepositories(image, repositories));
  const anyRemovable = images.some(mayRemove);

  return (
    <>
      <Table label="Images" columns={COLUMNS} fold={FOLD} actions={anyRemovable}>
        {images.map((image) => (
          <Row key={image.id}>
            <th scope="row">
              <Tags image={image} />
              <div className="disk-badges">
                <code className="muted small" title={image.id}>
                  {shortDigest(image.id)}
                </code>
                <Protected reason={image.protected} />
              </div>
            </th>
            <Cell column="Size" className="nowrap">
              <Size image={image} />
            </Cell>
            <Cell column="Created" className="nowrap">
              {formatDateTime(image.created, { seconds: false })}
            </Cell>
            <Cell column="Used by">
              <UsedBy users={image.used_by} />
            </Cell>
            {anyRemovable && (
              <RowActions>
                {mayRemove(image) && (
                  <button
                    type="button"
                    className="danger"
                    aria-label={`Remove image ${imageName(image)}`}
                    onClick={() => setRemoving(image)}
                  >
                    Remove
                  </button>
                )}
              </RowActions>
            )}
          </Row>
        ))}
      </Table>
      {removing && (
        <ConfirmDelete
          title={`Remove image ${imageName(removing)}?`}
          confirmLabel="Remove the image"
          remove={remove}
          variables={removing.id}
          onCancel={() => setRemoving(null)}
          onDeleted={() => setRemoving(null)}
        >
          <p>
            {removing.dangling
              ? "The untagged image leaves this host"
              : `The image and its tags (${removing.tags.join(", ")}) leave this host`}
            : about {formatBytes(removing.unique)} freed. Pulling it again brings it back. The engine refuses while a
            container uses it.
          </p>
        </ConfirmDelete>
      )}
    </>
  );
}
