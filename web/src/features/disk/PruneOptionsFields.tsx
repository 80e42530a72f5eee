import type { PruneOptions } from "../../api/types";

/** What a prune takes unless told otherwise (the server's defaults): nothing anyone could miss. */
export const DEFAULT_PRUNE_OPTIONS: PruneOptions = {
  images: "dangling",
  containers: true,
  networks: true,
  build_cache: true,
  volumes: "none",
};

const IMAGE_CHOICES: { value: PruneOptions["images"]; label: string }[] = [
  { value: "none", label: "None" },
  { value: "dangling", label: "Dangling (untagged) images" },
  { value: "unused", label: "Every image no container uses" },
];

const VOLUME_CHOICES: { value: PruneOptions["volumes"]; label: string }[] = [
  { value: "none", label: "None" },
  { value: "anonymous", label: "Anonymous volumes no container uses" },
  { value: "unused", label: "Every volume no container uses, named ones too (their data is lost)" },
];

/** What no prune ever takes, whatever its options, on any engine version. */
export function NeverTaken() {
  return (
    <p className="muted small never-taken">
      Never taken, whatever is chosen: the named volumes of any stack (running, stopped, or whose folder is gone), the
      images of a stack&apos;s services (stopped stacks too), the images an update keeps for its rollback, Stackyard&apos;s
      own image and helper, and anything labelled <code>stackyard.protect=true</code>.
    </p>
  );
}

/** The choices of a prune (by hand on the Disk page, or a schedule's), with what is never taken. */
export function PruneOptionsFields({
  value,
  onChange,
  name,
}: {
  value: PruneOptions;
  onChange: (options: PruneOptions) => void;
  /** Names the radio groups apart from other forms on the page. */
  name: string;
}) {
  return (
    <div className="prune-options">
      <fieldset>
        <legend>Images</legend>
        {IMAGE_CHOICES.map((choice) => (
          <label key={choice.value} className="check">
            <input
              type="radio"
              name={`${name}-images`}
              checked={value.images === choice.value}
              onChange={() => onChange({ ...value, images: choice.value })}
            />
            <span>{choice.label}</span>
          </label>
        ))}
      </fieldset>
      <fieldset>
        <legend>Also</legend>
        <label className="check">
          <input
            type="checkbox"
            checked={value.containers}
            onChange={(e) => onChange({ ...value, containers: e.target.checked })}
          />
          <span>Stopped containers of no stack</span>
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={value.networks}
            onChange={(e) => onChange({ ...value, networks: e.target.checked })}
          />
          <span>Networks no container uses</span>
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={value.build_cache}
            onChange={(e) => onChange({ ...value, build_cache: e.target.checked })}
          />
          <span>Build cache no build uses</span>
        </label>
      </fieldset>
      <fieldset>
        <legend>Volumes</legend>
        {VOLUME_CHOICES.map((choice) => (
          <label key={choice.value} className="check">
            <input
              type="radio"
              name={`${name}-volumes`}
              checked={value.volumes === choice.value}
              onChange={() => onChange({ ...value, volumes: choice.value })}
            />
            <span>{choice.label}</span>
          </label>
        ))}
      </fieldset>
      <NeverTaken />
    </div>
  );
}
