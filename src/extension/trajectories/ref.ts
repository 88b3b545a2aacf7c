// What a `whale-trajectory:` URI names, as plain strings (no vscode here, so it is unit-tested):
// the store, the evaluation (key hash), the line in its trajectories file and the trajectory id
// (checked on open, so a URI never silently shows another rollout). The path ends in
// `.whale-transcript` so the editor gives the document its language and a readable tab title.
export const TRAJECTORY_SCHEME = 'whale-trajectory';

export interface TrajectoryRef {
  store: string;
  keyHash: string;
  /** 0-based line among the trajectories of the file. */
  index: number;
  /** The trajectory's id, when known. */
  id?: string;
  /** Task id, for the title only. */
  taskId?: string;
  sample?: number;
}

const SAFE = /[^A-Za-z0-9._-]+/g;

export function refToParts(ref: TrajectoryRef): { path: string; query: string } {
  const title = `${(ref.taskId ?? 'trajectory').replace(SAFE, '_')}${ref.sample !== undefined ? `-s${ref.sample}` : ''}`;
  const q = new URLSearchParams({ store: ref.store, ...(ref.id ? { id: ref.id } : {}) });
  return { path: `/${ref.keyHash}/${ref.index}/${title}.whale-transcript`, query: q.toString() };
}

export function refFromParts(path: string, query: string): TrajectoryRef {
  const m = /^\/([0-9a-f]{8,64})\/(\d+)\/([^/]*)\.whale-transcript$/.exec(path);
  if (!m) throw new Error(`not a trajectory address: ${path} (expected /<key hash>/<line>/<title>.whale-transcript)`);
  const q = new URLSearchParams(query);
  const store = q.get('store');
  if (!store) throw new Error(`trajectory address ${path} names no run store (?store=…)`);
  const title = /^(.*?)(?:-s(\d+))?$/.exec(m[3])!;
  return {
    store,
    keyHash: m[1],
    index: Number(m[2]),
    ...(q.get('id') ? { id: q.get('id')! } : {}),
    taskId: title[1],
    ...(title[2] !== undefined ? { sample: Number(title[2]) } : {}),
  };
}
